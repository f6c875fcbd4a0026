import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';

/**
 * PostgreSQL, Redis, nginx and Chromium are optional on a newcomer's machine and mandatory in CI. A suite that needs
 * one asks here: without it, the suite is skipped with one line saying which variable enables it; under CI
 * (CI=true) a missing one fails the suite instead, so a skip can never hide a failure there.
 */
/** `enable` finishes the sentence "to run them, …". */
type Need = { variable: string; what: string; enable: string; value: string | undefined };

const needs = {
  postgres: (): Need => ({ variable: 'TEST_DATABASE_URL', what: 'PostgreSQL', enable: 'set TEST_DATABASE_URL', value: process.env.TEST_DATABASE_URL }),
  redis: (): Need => ({ variable: 'TEST_REDIS_URL', what: 'Redis', enable: 'set TEST_REDIS_URL', value: process.env.TEST_REDIS_URL }),
  nginx: (): Need => {
    try {
      execFileSync('nginx', ['-v'], { stdio: 'ignore' });
      return { variable: 'nginx', what: 'nginx', enable: '', value: 'nginx' };
    } catch {
      return { variable: 'nginx', what: 'nginx', enable: 'put nginx on the PATH (apt-get install nginx-light)', value: undefined };
    }
  },
  chromium: (): Need => {
    const path = process.env.TEST_CHROMIUM ?? '/usr/bin/chromium';
    return {
      variable: 'TEST_CHROMIUM',
      what: 'Chromium',
      enable: `install Debian's chromium at /usr/bin/chromium, or set TEST_CHROMIUM to its path`,
      value: existsSync(path) ? path : undefined,
    };
  },
};

export type Service = keyof typeof needs;

/** The service's URL (or Chromium's path), or undefined when it is not there; throws under CI. */
export function optionalService(service: Service): string | undefined {
  const need = needs[service]();
  if (need.value !== undefined && need.value !== '') return need.value;
  if (process.env.CI === 'true') {
    throw new Error(`${need.what} is required in CI: ${need.enable} (.ci/run does)`);
  }
  return undefined;
}

/** Called once by jest's globalSetup: one plain line per optional service that is missing. */
export function reportMissingServices(): void {
  for (const service of Object.keys(needs) as Service[]) {
    const need = needs[service]();
    if (optionalService(service) === undefined) {
      process.stdout.write(`\nskipped: the ${need.what} suites; to run them, ${need.enable}\n`);
    }
  }
}

/** describe, or describe.skip with the skip line, depending on the service being there. */
export function describeWith(service: Service, name: string, body: (value: string) => void): void {
  const value = optionalService(service);
  if (value === undefined) describe.skip(`${name} (needs ${needs[service]().variable})`, () => body(''));
  else describe(name, () => body(value));
}
