/// <reference types="vite/client" />

/** Build-time settings (`VITE_…` variables when `vite build` runs); unset, the app asks for a token instead. */
interface ImportMetaEnv {
  /** The OpenID provider to sign in with: a URL, or a path on the app's own origin (`/idp` in the compose stack). */
  readonly VITE_OIDC_ISSUER?: string;
  /** The app's client id at that provider; `plant-store-web` by default. */
  readonly VITE_OIDC_CLIENT_ID?: string;
}

interface ImportMeta {
  readonly env: ImportMetaEnv;
}
