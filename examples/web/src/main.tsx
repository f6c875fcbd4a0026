/**
 * The Plant Store example app: React with TanStack Query on @plant-store/client. The token lives in React state
 * only (never localStorage, sessionStorage or a cookie), whether typed or got by signing in (sign-in.ts); ids
 * stay bigint from the form to the table.
 */
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './app';

const queryClient = new QueryClient({
  defaultOptions: {
    // The live feed keeps what is cached current, so nothing goes stale by age or on focus; the client itself
    // retries what is worth retrying (429, 503, network errors).
    queries: { staleTime: Infinity, refetchOnWindowFocus: false, retry: false },
  },
});

createRoot(document.getElementById('root') as HTMLElement).render(
  <StrictMode>
    <QueryClientProvider client={queryClient}>
      <App />
    </QueryClientProvider>
  </StrictMode>,
);
