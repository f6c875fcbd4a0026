// npm run token [-- <scope> … [tenant=<name>]]: a new random static token, printed once, and the AUTH_TOKENS_FILE
// line that accepts it (its SHA-256 digest, so the secret itself never has to sit on the server's disk). The scopes
// are the registered resources' (src/resources.ts), so this script sits beside the composition root. The tenant's
// name is taken as typed and written percent-encoded, as the line wants it.
import { createHash, randomBytes } from 'node:crypto';
import { scopeList } from './auth';
import { accessOf, RESOURCES } from './resources';
import { TENANT_NAME_MAX } from './tenant';

function refuse(message: string): never {
  process.stderr.write(`npm run token: ${message}\n`);
  process.exit(1);
}

const known = accessOf(RESOURCES).scopes;
const args = process.argv.slice(2);
const tenants = args.filter((arg) => arg.startsWith('tenant=')).map((arg) => arg.slice('tenant='.length));
const scopes = args.filter((arg) => !arg.startsWith('tenant='));
const unknown = scopes.find((scope) => !known.includes(scope));
if (unknown !== undefined) refuse(`unknown scope "${unknown}"; the scopes are ${scopeList(known)}`);
if (tenants.length > 1) refuse('name one tenant= at most');
const [tenant] = tenants;
if (tenant !== undefined && (tenant.length === 0 || tenant.length > TENANT_NAME_MAX)) refuse(`tenant=: the name must be 1 to ${TENANT_NAME_MAX} characters`);

const token = randomBytes(32).toString('base64url');
const digest = createHash('sha256').update(token).digest('hex');
const line = ['sha256:' + digest, ...scopes, ...(tenant === undefined ? [] : [`tenant=${encodeURIComponent(tenant)}`])];
process.stdout.write(
  [
    'Token (shown this once; give it to the client, it is not stored anywhere):',
    `  ${token}`,
    'Line for AUTH_TOKENS_FILE (the digest, not the secret); the service picks it up without a restart:',
    `  ${line.join(' ')}`,
    '',
  ].join('\n'),
);
