import { StrictMode } from 'react';
import { render } from 'react-dom';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { App } from './App';
import { ApiError, tokenStore } from './api';
import './styles.css';
import { documentLanguage } from './i18n';

document.documentElement.lang = documentLanguage;

// Back from single sign-on: the server put the Account-Token in the fragment; keep it and drop it from the URL.
const sso = /^#sso=([0-9a-f]{40})$/.exec(window.location.hash);
if (sso) {
  tokenStore.set(sso[1]!);
  window.history.replaceState(null, '', `${window.location.pathname}#/`);
}

const client = new QueryClient({
  defaultOptions: {
    queries: {
      staleTime: 5_000,
      refetchOnWindowFocus: true,
      // Client errors (403, 404…) will not heal by retrying.
      retry: (count, error) => count < 2 && !(error instanceof ApiError && error.status >= 400 && error.status < 500),
    },
  },
});

render(
  <StrictMode>
    <QueryClientProvider client={client}>
      <App />
    </QueryClientProvider>
  </StrictMode>,
  document.getElementById('root'),
);
