// npm run token [-- plants:read …]: a new random static token, printed once, and the AUTH_TOKENS_FILE line
// that accepts it (its SHA-256 digest, so the secret itself never has to sit on the server's disk).
import { createHash, randomBytes } from 'node:crypto';
import { isScope } from './scopes';

const scopes = process.argv.slice(2);
const unknown = scopes.find((scope) => !isScope(scope));
if (unknown !== undefined) {
  process.stderr.write(`npm run token: unknown scope "${unknown}"; the scopes are plants:read and plants:write\n`);
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
