import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { reportMissingServices } from './optional-services';

export default function globalSetup(): void {
  reportMissingServices();
  const root = path.resolve(__dirname, '..', '..');
  execFileSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-b', 'tsconfig.build.json'], { cwd: root, stdio: 'inherit' });
  // The client's dist/ (browser tests load it, the example app bundles it), built by its own TypeScript.
  const client = path.join(root, 'clients', 'typescript');
  execFileSync(process.execPath, [path.join(client, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json'], { cwd: client, stdio: 'inherit' });
}
