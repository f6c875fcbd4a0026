// The static tokens every test app and server process accepts (AUTH_TOKENS); ./test-app re-exports them. A file of
// their own, so the process helpers and the in-process app import them without importing each other.
export const TOKEN = 'test-token-0123456789abcdefghijklmnopqrstuvwxyz';
export const OTHER_TOKEN = 'other-token-0123456789abcdefghijklmnopqrstuvwxyz';
