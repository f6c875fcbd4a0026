import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

// Every relative link in the README and docs/ leads to a file that exists, and an anchor to a heading in it, so
// moving a section never leaves a reader at a dead end.
const ROOT = path.resolve(__dirname, '..', '..');

function markdownFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) return markdownFiles(full);
    return name.endsWith('.md') ? [full] : [];
  });
}

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens (and `<a id>` anchors). */
const anchorOf = (heading: string) =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\- _]/gu, '')
    .replace(/ /g, '-');

function anchorsIn(file: string): Set<string> {
  const text = readFileSync(file, 'utf8').replace(/```[\s\S]*?```/g, '');
  const headings = [...text.matchAll(/^#{1,6} (.+)$/gm)].map((match) => anchorOf(match[1] ?? ''));
  const named = [...text.matchAll(/<a id="([^"]+)"><\/a>/g)].map((match) => match[1] ?? '');
  return new Set([...headings, ...named]);
}

describe('links in the README and docs/', () => {
  const files = [path.join(ROOT, 'README.md'), ...markdownFiles(path.join(ROOT, 'docs'))];

  it('when a relative link is followed, then its file and its anchor exist', () => {
    const broken: string[] = [];
    for (const file of files) {
      const text = readFileSync(file, 'utf8').replace(/```[\s\S]*?```/g, '');
      for (const [, target = ''] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z]+:/i.test(target)) continue;
        const [relative = '', anchor] = target.split('#');
        const resolved = relative === '' ? file : path.resolve(path.dirname(file), relative);
        const where = `${path.relative(ROOT, file)} → ${target}`;
        if (!existsSync(resolved)) broken.push(`${where}: no such file`);
        else if (anchor !== undefined && resolved.endsWith('.md') && !anchorsIn(resolved).has(anchor)) broken.push(`${where}: no such heading`);
      }
    }

    expect(broken).toEqual([]);
  });
});
