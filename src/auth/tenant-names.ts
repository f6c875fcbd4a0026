import { TENANT_NAME_MAX } from '../tenant';

// What may stand in a token line or a header: visible ASCII, so a name in any script is sent percent-encoded.
const ENCODED = /^[!-~]+$/;

/** Whether a claim's value can name a tenant: a string of 1 to 255 characters (`.length`, the rule `sub` has). */
export function isTenantName(value: unknown): value is string {
  return typeof value === 'string' && value.length >= 1 && value.length <= TENANT_NAME_MAX;
}

/**
 * The name a percent-encoded value stands for (a token line's `tenant=`, the Act-As-Tenant header): UTF-8 decoded,
 * 1 to 255 characters. Undefined when the value is empty, holds a character that must be encoded, is not valid
 * percent-encoding of UTF-8 (`%zz`, a lone `%C3`), or decodes to a name too long.
 */
export function decodeTenantName(encoded: string): string | undefined {
  if (!ENCODED.test(encoded)) return undefined;
  let name: string;
  try {
    name = decodeURIComponent(encoded);
  } catch {
    return undefined;
  }
  return isTenantName(name) ? name : undefined;
}
