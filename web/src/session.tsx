import { createContext, useContext, useEffect, useState, type ReactNode } from 'react';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { api, SESSION_ENDED, tokenStore } from './api';
import type { User } from './types';

interface Session {
  token: string | null;
  user: User | undefined;
  /** Why the last session ended without a sign-out (shown on the sign-in page). */
  ended: string | null;
  /** `otp`: the two-factor code, when the account has 2FA on (the server asks with `X-Seafile-OTP: required`). */
  signIn(email: string, password: string, otp?: string): Promise<void>;
  signOut(): void;
}

const SessionContext = createContext<Session | null>(null);

export function SessionProvider({ children }: { children: ReactNode }) {
  const [token, setToken] = useState<string | null>(tokenStore.get());
  const [ended, setEnded] = useState<string | null>(null);
  const client = useQueryClient();
  useEffect(() => {
    const onEnded = () => {
      client.clear();
      setToken(null);
      setEnded('Your session has ended (the password was changed or the session was signed out elsewhere). Please sign in again.');
    };
    window.addEventListener(SESSION_ENDED, onEnded);
    return () => window.removeEventListener(SESSION_ENDED, onEnded);
  }, [client]);
  const me = useQuery(['me', token], () => api<User>('/api/v2.1/user/'), {
    enabled: token !== null,
    onError: () => {
      tokenStore.clear();
      setToken(null);
    },
  });
  const session: Session = {
    token,
    user: me.data,
    ended,
    async signIn(email, password, otp) {
      const { token: fresh } = await api<{ token: string }>('/api2/auth-token/', {
        method: 'POST',
        body: { username: email, password },
        token: null,
        ...(otp ? { headers: { 'x-seafile-otp': otp } } : {}),
      });
      // Signing in again as the same user (after a password change): no "Signing in" flash.
      if (me.data && me.data.contact_email.toLowerCase() === email.toLowerCase()) client.setQueryData(['me', fresh], me.data);
      tokenStore.set(fresh);
      setEnded(null);
      setToken(fresh);
    },
    signOut() {
      tokenStore.clear();
      client.clear();
      setToken(null);
      window.location.hash = '#/';
    },
  };
  return <SessionContext.Provider value={session}>{children}</SessionContext.Provider>;
}

export function useSession(): Session {
  const session = useContext(SessionContext);
  if (!session) throw new Error('useSession outside SessionProvider');
  return session;
}
