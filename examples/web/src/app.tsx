/**
 * Sign-in, then the store: the client is made from the access token and handed down through context. With a
 * provider named at build time (sign-in.ts) the user signs in there; the token form stays for a static token.
 */
import { useEffect, useMemo, useState } from 'react';
import { StoreProvider, connect, type PlantStore } from './data';
import { PlantsPage } from './plants-page';
import { signIn, signInConfig, signOut, startSignIn, type Session, type SignInState } from './sign-in';

const provider = signInConfig();

export function App() {
  const [client, setClient] = useState<PlantStore>();
  const [auth, setAuth] = useState<SignInState>(provider === undefined ? { kind: 'signed-out' } : { kind: 'starting' });
  useEffect(() => {
    if (provider !== undefined) void startSignIn(provider).then(setAuth);
  }, []);

  if (client !== undefined) return <Store store={client} />;
  if (auth.kind === 'signed-in') return <SignedIn session={auth.session} />;
  if (auth.kind === 'starting' || auth.kind === 'redirecting') return <p id="signing-in" className="hint">Signing in…</p>;
  return (
    <>
      {provider !== undefined && (
        <section id="sign-in">
          <button
            id="sign-in-button"
            type="button"
            onClick={() => {
              setAuth({ kind: 'redirecting' });
              signIn(provider).catch((error: unknown) => setAuth({ kind: 'signed-out', problem: `The sign-in service could not be reached: ${(error as Error).message}` }));
            }}
          >
            Sign in
          </button>
          {auth.problem !== undefined && (
            <p id="sign-in-problem" role="alert" className="hint failed">
              {auth.problem}
            </p>
          )}
        </section>
      )}
      <TokenForm onToken={(token) => setClient(connect(token))} />
    </>
  );
}

function SignedIn({ session }: { session: Session }) {
  const store = useMemo(() => connect(session.accessToken), [session]);
  return (
    <>
      <p id="account" className="toolbar">
        Signed in as <strong id="user">{session.user}</strong>
        <button id="sign-out" type="button" onClick={() => provider !== undefined && void signOut(provider, session)}>
          Sign out
        </button>
      </p>
      <Store store={store} />
    </>
  );
}

function Store({ store }: { store: PlantStore }) {
  return (
    <StoreProvider value={store}>
      <PlantsPage />
    </StoreProvider>
  );
}

function TokenForm({ onToken }: { onToken: (token: string) => void }) {
  const [token, setToken] = useState('');
  return (
    <form
      id="login"
      onSubmit={(event) => {
        event.preventDefault();
        onToken(token);
      }}
    >
      <label>
        Bearer token <input id="token" type="password" autoComplete="off" required value={token} onChange={(event) => setToken(event.target.value)} />
      </label>
      <button type="submit">Use token</button>
      <p className="hint">Kept in this page's memory only: reloading forgets it.</p>
    </form>
  );
}
