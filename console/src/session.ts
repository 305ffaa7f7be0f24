import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import type { OpenBaaS } from './api.js';

export interface Session {
  api: OpenBaaS;
  /** Whether the sandbox routes answer (they do not on a production server). */
  sandbox: boolean;
  signOut: () => void;
}

export const SessionContext = createContext<Session | undefined>(undefined);

export function useSession(): Session {
  const session = useContext(SessionContext);
  if (!session) throw new Error('useSession outside a signed-in console');
  return session;
}
