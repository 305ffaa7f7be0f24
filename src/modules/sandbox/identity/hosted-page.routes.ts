import { readClientNow } from '../../../platform/client-clock.js';
import type { FastifyReply } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { App } from '../../../platform/http/app-type.js';
import type { Deps } from '../../../platform/deps.js';
import { withClientTransaction } from '../../../platform/db/client-fence.js';
import type { RequestContext } from '../../../platform/http/context.js';
import { applyVerificationOutcome, expireIfDue, findByTokenHash, verificationOutcomes, type ComplianceRuntime, type VerificationOutcome } from '../../compliance/index.js';
import { renderHostedPage, type HostedPageView } from './hosted-page.js';
import { hashSdkToken, hostedKycPathPrefix, sandboxOutcomeFor, sdkTokenPattern } from './sandbox-identity-provider.js';

/** The form posts one short field; anything bigger is not ours. */
const formBodyLimitBytes = 4096;

/** The body of a request that is not a form: the POST answers it with a 415 page. */
const notAForm = Symbol('not a form');

/** The values the form's `outcome` field takes: AUTO (the magic last names decide) or an outcome. */
const formOutcomes: readonly string[] = ['AUTO', ...verificationOutcomes];

/**
 * The outcome a form asks for, or what is wrong with it. Exactly one `outcome` field with a known
 * value: until 2026-12-06 a missing or repeated field was taken as AUTO (for a person named Deny, a
 * final denial) and an unknown value was silently ignored (found by an audit).
 */
function outcomeOf(form: URLSearchParams): { chosen: string } | { problem: string } {
  const values = form.getAll('outcome');
  if (values.length === 0) return { problem: 'The form has no outcome field.' };
  if (values.length > 1) return { problem: `The form has the outcome field ${values.length} times; send it once.` };
  const chosen = values[0] ?? '';
  if (!formOutcomes.includes(chosen)) return { problem: `The outcome ${JSON.stringify(chosen.slice(0, 40))} is not one the page knows (values are case-sensitive).` };
  return { chosen };
}

/** Headers of every hosted page: never cached, never framed, no referrer (the token is in the URL), no script. */
function sendPage(reply: FastifyReply, statusCode: number, view: HostedPageView): FastifyReply {
  return reply
    .code(statusCode)
    .headers({
      'content-type': 'text/html; charset=utf-8',
      'cache-control': 'no-store',
      'referrer-policy': 'no-referrer',
      'x-frame-options': 'DENY',
      'x-content-type-options': 'nosniff',
      'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; img-src data:; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
    })
    .send(renderHostedPage(view));
}

function fullName(person: { firstName: string; lastName: string }): string {
  return `${person.firstName} ${person.lastName}`.trim();
}

/**
 * The hosted verification page (sandbox only): GET shows it, POST submits the person's result.
 * Public routes: the unguessable token in the path is the only credential.
 */
export function registerHostedPageRoutes(app: App, deps: Deps, runtime: ComplianceRuntime): void {
  const params = Type.Object({ token: Type.String({ maxLength: 200 }) });

  void app.register(async (plainScope) => {
    const scope = plainScope.withTypeProvider<TypeBoxTypeProvider>();
    // The page posts a form and nothing else: any other body (JSON included, which the app parses
    // elsewhere) reaches the POST as notAForm and is refused with a 415 page.
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: formBodyLimitBytes }, (_request, body, done) => {
      done(null, new URLSearchParams(typeof body === 'string' ? body : body.toString('utf8')));
    });
    scope.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: formBodyLimitBytes }, (_request, _body, done) => {
      done(null, notAForm);
    });

    scope.get(
      `${hostedKycPathPrefix}:token`,
      { config: { public: true }, schema: { hide: true, params } },
      async (request, reply) => {
        const token = request.params.token;
        const found = sdkTokenPattern.test(token) ? await findByTokenHash(deps.db, hashSdkToken(token)) : undefined;
        if (!found) return sendPage(reply, 404, { kind: 'not-found' });
        const { onboarding } = found;
        // The person's deadline is by the client's clock (which the sandbox can move ahead).
        const now = await readClientNow(deps, deps.db, onboarding.client_id);
        const name = fullName(found);
        // A link replaced by a re-run is as dead as an expired one.
        const dead = onboarding.status === 'EXPIRED' || onboarding.status === 'ARCHIVED';
        if (dead || (onboarding.status === 'PENDING' && onboarding.sdk_expires_at !== null && onboarding.sdk_expires_at <= now)) {
          return sendPage(reply, 410, { kind: 'expired', fullName: name });
        }
        if (onboarding.status === 'PENDING' && onboarding.verification_status === 'PENDING' && onboarding.sdk_expires_at !== null) {
          return sendPage(reply, 200, { kind: 'open', token, fullName: name, expiresAt: onboarding.sdk_expires_at, magicOutcome: sandboxOutcomeFor(found) });
        }
        return sendPage(reply, 200, { kind: 'done', fullName: name, onboardingStatus: onboarding.status, verificationStatus: onboarding.verification_status });
      },
    );

    scope.post(
      `${hostedKycPathPrefix}:token`,
      { config: { public: true }, schema: { hide: true, params } },
      async (request, reply) => {
        const token = request.params.token;
        const found = sdkTokenPattern.test(token) ? await findByTokenHash(deps.db, hashSdkToken(token)) : undefined;
        if (!found) return sendPage(reply, 404, { kind: 'not-found' });
        // A request the page does not understand changes nothing, whatever the link's state.
        if (request.body === notAForm) {
          return sendPage(reply, 415, { kind: 'refused', token, problem: 'The submission is not a form (application/x-www-form-urlencoded).' });
        }
        const asked = outcomeOf(request.body instanceof URLSearchParams ? request.body : new URLSearchParams());
        if ('problem' in asked) return sendPage(reply, 400, { kind: 'refused', token, problem: asked.problem });
        const outcome: VerificationOutcome = asked.chosen === 'AUTO' ? sandboxOutcomeFor(found) : (asked.chosen as VerificationOutcome);
        const now = await readClientNow(deps, deps.db, found.onboarding.client_id);
        const context: RequestContext = { clientId: found.onboarding.client_id, traceId: String(request.id), now };
        const name = fullName(found);
        const result = await withClientTransaction(deps.db, context.clientId, async (tx) => {
          if (await expireIfDue(tx, context, found.onboarding.id)) return 'expired' as const;
          const onboarding = (await findByTokenHash(tx, hashSdkToken(token)))?.onboarding;
          if (!onboarding || onboarding.status === 'EXPIRED' || onboarding.status === 'ARCHIVED') return 'expired' as const;
          // Only an unfinished flow takes a result; a second submission just shows the result.
          if (onboarding.status !== 'PENDING' || onboarding.verification_status !== 'PENDING') return 'done' as const;
          await applyVerificationOutcome(tx, context, runtime, onboarding.id, outcome);
          return 'done' as const;
        });
        if (result === 'expired') return sendPage(reply, 410, { kind: 'expired', fullName: name });
        // Post/redirect/get: reloading the result page does not submit again.
        return reply.code(303).header('location', `${hostedKycPathPrefix}${token}`).header('cache-control', 'no-store').send();
      },
    );
  });
}
