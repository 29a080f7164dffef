import { createContext, useContext, useState, type ReactNode } from 'react';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { api, tokenStore } from './api';
import type { User } from './types';

interface Session {
  token: string | null;
  user: User | undefined;
  signIn(email: string, password: string): Promise<void>;
  signOut(): void;
}

const SessionContext = createContext<Session | null>(null);

export function SessionProvider({ children }: { children: ReactNode }) {
  const [token, setToken] = useState<string | null>(tokenStore.get());
  const client = useQueryClient();
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
    async signIn(email, password) {
      const { token: fresh } = await api<{ token: string }>('/api2/auth-token/', {
        method: 'POST',
        body: { username: email, password },
        token: null,
      });
      tokenStore.set(fresh);
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
