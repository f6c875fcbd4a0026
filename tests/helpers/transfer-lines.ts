/** Export lines the transfer suites share (export-import, tenant-transfer and tenant-transfer-postgres), with the times an import keeps. */
export const TIMES = '"createdAt":"2025-12-31T23:59:59.999Z","updatedAt":"2026-03-04T05:06:07.008Z"';

/** The same id in three tenants, in (tenant, id) order as an export writes them: the shared tenant's (no member) first. */
export const TENANTS_EXPORTED =
  `{"id":1,"name":"shared one",${TIMES}}\n` +
  `{"id":2,"name":"shared two","tag":"t",${TIMES}}\n` +
  `{"tenant":"acme","id":1,"name":"acme one",${TIMES}}\n` +
  `{"tenant":"bob 🌿","id":1,"name":"bob one","tag":"t",${TIMES}}\n`;
