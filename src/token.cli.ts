// npm run token [-- <scope> …]: a new random static token, printed once, and the AUTH_TOKENS_FILE line that
// accepts it (its SHA-256 digest, so the secret itself never has to sit on the server's disk). The scopes are the
// registered resources' (src/resources.ts), so this script sits beside the composition root.
import { createHash, randomBytes } from 'node:crypto';
import { scopeList } from './auth';
import { accessOf, RESOURCES } from './resources';

const known = accessOf(RESOURCES).scopes;
const scopes = process.argv.slice(2);
const unknown = scopes.find((scope) => !known.includes(scope));
if (unknown !== undefined) {
  process.stderr.write(`npm run token: unknown scope "${unknown}"; the scopes are ${scopeList(known)}\n`);
  process.exit(1);
}
const token = randomBytes(32).toString('base64url');
const digest = createHash('sha256').update(token).digest('hex');
process.stdout.write(
  [
    'Token (shown this once; give it to the client, it is not stored anywhere):',
    `  ${token}`,
    'Line for AUTH_TOKENS_FILE (the digest, not the secret); the service picks it up without a restart:',
    `  ${['sha256:' + digest, ...scopes].join(' ')}`,
    '',
  ].join('\n'),
);
