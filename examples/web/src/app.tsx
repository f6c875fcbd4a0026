/** Sign-in, then the store: the client is made from the token and handed down through context. */
import { useState } from 'react';
import { StoreProvider, connect, type PlantStore } from './data';
import { PlantsPage } from './plants-page';

export function App() {
  const [client, setClient] = useState<PlantStore>();
  const [token, setToken] = useState('');
  if (client !== undefined) {
    return (
      <StoreProvider value={client}>
        <PlantsPage />
      </StoreProvider>
    );
  }
  return (
    <form
      id="login"
      onSubmit={(event) => {
        event.preventDefault();
        setClient(connect(token));
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
