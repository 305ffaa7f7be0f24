import { settlementTimer } from './bank-transfers/index.js';
import { linkExpiryTimer } from './compliance/index.js';
import { cardCoopDecisionTimer, cardHoldExpiryTimer } from './cards/index.js';
import { creditInterestTimer, lineInterestTimer } from './credit/index.js';
import type { TimerKind } from './timers/index.js';

/**
 * Every timer kind of the program (src/modules/timers/timers.ts says how a module makes one).
 * The timer worker runs them all, and so does the sandbox clock's advance call.
 */
export const timerKinds: readonly TimerKind[] = [settlementTimer, linkExpiryTimer, cardHoldExpiryTimer, cardCoopDecisionTimer, creditInterestTimer, lineInterestTimer];
