import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { reportMissingServices } from './optional-services';

export default function globalSetup(): void {
  reportMissingServices();
  const root = path.resolve(__dirname, '..', '..');
  execFileSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-b', 'tsconfig.build.json'], { cwd: root, stdio: 'inherit' });
}
