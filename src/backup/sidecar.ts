/**
 * The sidecar beside each backup, FILE.meta.json: what a restore checks the file against (its SHA-256 and size)
 * and what it holds (plants, migration level). Written before the backup gets its final name, so a file under
 * a backup's name always has its sidecar.
 */
import { readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { fsyncPath, temporaryName } from './files';
import { BackupError } from './store-file';

export const SIDECAR_SUFFIX = '.meta.json';
const FORMAT = 'plant-store-backup/1';

const sidecarSchema = z.object({
  format: z.literal(FORMAT),
  file: z.string(),
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
  bytes: z.number().int().nonnegative(),
  plants: z.number().int().nonnegative(),
  migration: z.string().nullable(),
  createdAt: z.string(),
  source: z.string(),
});

export type Sidecar = z.infer<typeof sidecarSchema>;

export const sidecarPath = (backup: string): string => backup + SIDECAR_SUFFIX;

export async function writeSidecar(backup: string, facts: Omit<Sidecar, 'format' | 'file'>): Promise<string> {
  const target = sidecarPath(backup);
  const temp = temporaryName(path.dirname(target), 'meta.json');
  const body: Sidecar = { format: FORMAT, file: path.basename(backup), ...facts };
  await writeFile(temp, `${JSON.stringify(body, null, 2)}\n`, { flag: 'wx' });
  await fsyncPath(temp);
  await rename(temp, target);
  return target;
}

export async function readSidecar(backup: string): Promise<Sidecar> {
  const file = sidecarPath(backup);
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') {
      throw new BackupError(`${file} is missing: without its sidecar the backup cannot be checked (was it written by plant-store backup, and copied with it?)`);
    }
    throw new BackupError(`${file} cannot be read (${code ?? 'error'})`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new BackupError(`${file} is not JSON: the sidecar is damaged`);
  }
  const result = sidecarSchema.safeParse(parsed);
  if (!result.success) throw new BackupError(`${file} is not a plant-store backup sidecar (${FORMAT}): ${result.error.issues[0]?.path.join('.') ?? ''} ${result.error.issues[0]?.message ?? ''}`);
  return result.data;
}
