/**
 * "Every statement carries the tenant" (issue 35, docs/decisions/tests.md): `tenantProblems(sql)` reads a
 * statement (or several, or a function body) and names each reference to a tenant table that its own (sub)query
 * does not confine to one tenant. A reference is FROM, JOIN, INTO, UPDATE (DELETE FROM included) or a comma in a
 * FROM list naming plants, plant_events, idempotency_keys or webhook_outbox, with its alias. It passes when that
 * (sub)query, UNION branch by branch, has `[alias.]tenant = …` (or `==`, `IS`, `IN`, `= ANY(…)`), a join
 * `… = [alias.]tenant`, a `(…, tenant, …)` row comparison, `USING (…tenant…)`; an INSERT when its column list
 * names `tenant`. SET clauses do not count (an assignment is no condition); nested subqueries do not lend their
 * conditions to the query around them. DDL is skipped; a dollar-quoted body (CREATE FUNCTION, DO) is read as
 * statements of its own. ALLOWED holds the statements that stay global on purpose, each with its reason.
 */

export const TENANT_TABLES = ['plants', 'plant_events', 'idempotency_keys', 'webhook_outbox'] as const;
/** SQL a test runs itself (inspection, planted faults) carries this comment: the guard lets it through. */
export const UNCHECKED = '/* unchecked: test */';

export type Allowed = { name: string; pattern: RegExp; reason: string; routes?: boolean };

// Patterns match the statement as tenantProblems reads it: comments gone, every string literal emptied to '',
// whitespace collapsed to single spaces, none just inside parentheses. `routes`: it returns
// rows the service sends on to one tenant's streams or subscribers, so it must select `tenant`.
const P = String.raw`(?:\?|\$\d+)`;
export const ALLOWED: readonly Allowed[] = [
  { name: 'events after a position', pattern: new RegExp(String.raw`^SELECT .+ FROM plant_events WHERE pos > ${P} ORDER BY pos LIMIT ${P}$`, 'i'), reason: 'the live reader reads every tenant in commit order and routes each event by its tenant', routes: true },
  { name: 'oldest event', pattern: /^SELECT min\(pos\) FROM plant_events$/i, reason: 'positions are store-wide: resume and reset compare against the global oldest' },
  { name: 'feed bounds', pattern: /^SELECT \(SELECT min\(pos\) FROM plant_events\) AS oldest, \(SELECT last_pos FROM plant_event_counter\) AS last,/i, reason: 'positions are store-wide (oldest, last, restore gaps)' },
  { name: 'event pruning by age', pattern: new RegExp(String.raw`^DELETE FROM plant_events WHERE pos IN \(SELECT pos FROM plant_events ORDER BY pos LIMIT ${P}\) AND at < ${P}$`, 'i'), reason: 'retention is by age, the same for every tenant' },
  { name: 'key pruning by expiry', pattern: new RegExp(String.raw`^DELETE FROM idempotency_keys WHERE .+ IN \(SELECT .+ FROM idempotency_keys WHERE expires_at <= .+ LIMIT ${P}( FOR UPDATE SKIP LOCKED)?\)$`, 'i'), reason: 'an expired key is expired in every tenant' },
  { name: 'outbox dispatch (SQLite due)', pattern: new RegExp(String.raw`^SELECT .+ FROM webhook_outbox WHERE subscriber = ${P} AND status = '' AND next_attempt_at <= ${P}`, 'i'), reason: 'the dispatcher delivers every tenant by subscriber and seq; the delivery names its tenant', routes: true },
  { name: 'outbox dispatch (PostgreSQL claim)', pattern: new RegExp(String.raw`^UPDATE webhook_outbox SET next_attempt_at = ${P} WHERE seq IN \(SELECT seq FROM webhook_outbox WHERE subscriber = ${P} AND status = ''`, 'i'), reason: 'the dispatcher claims every tenant by subscriber and seq; the delivery names its tenant', routes: true },
  { name: 'outbox settle by seq', pattern: new RegExp(String.raw`^UPDATE webhook_outbox (AS o )?SET status = .+ WHERE (o\.)?seq = (${P}|s\.seq)$`, 'i'), reason: 'an outcome is written to the row the dispatcher claimed, by its seq' },
  { name: 'outbox release by seq', pattern: new RegExp(String.raw`^UPDATE webhook_outbox SET next_attempt_at = ${P} WHERE seq = ANY\(${P}::bigint\[\]\) AND status = ''$`, 'i'), reason: 'claimed rows handed back at shutdown, by seq' },
  { name: 'outbox pruning by age', pattern: new RegExp(String.raw`^DELETE FROM webhook_outbox WHERE seq IN \(SELECT seq FROM webhook_outbox WHERE status <> '' AND updated_at < ${P} LIMIT 1000\)$`, 'i'), reason: 'retention is by age for every tenant' },
  { name: 'outbox backlog', pattern: /^SELECT count\(\*\)(::int)? AS (n|events), min\(created_at\) AS oldest FROM webhook_outbox WHERE status = ''$/i, reason: 'a metric of the whole outbox' },
  { name: 'outbox retire', pattern: /^UPDATE webhook_outbox SET status = '', updated_at = .+ WHERE status = '' AND /i, reason: 'a subscriber no longer configured is gone for every tenant' },
  { name: 'count of every plant', pattern: /^SELECT count\(\*\)( AS \w+)? FROM plants$/i, reason: 'export, import and backup sidecars count the whole store' },
  { name: 'export of every tenant', pattern: new RegExp(String.raw`^SELECT .+ FROM plants( WHERE \(tenant, id\) > \(${P}, ${P}\))? ORDER BY tenant, id LIMIT ${P}$`, 'i'), reason: 'export carries every tenant, in (tenant, id) order, each line with its tenant', routes: true },
  { name: 'search-key backfill scan', pattern: new RegExp(String.raw`^SELECT .+ FROM plants WHERE name_key IS NULL( ORDER BY (tenant, )?id)? LIMIT ${P}$`, 'i'), reason: 'keys missing after a migration are filled for every tenant; the fill names the row by (tenant, id)', routes: true },
];

/** Why a statement does not pass, one line per reference; empty when it does. */
export function tenantProblems(sql: string): string[] {
  if (sql.includes(UNCHECKED)) return [];
  const { text, bodies } = scan(sql);
  const problems = bodies.flatMap((body) => tenantProblems(body));
  for (const statement of splitStatements(text)) problems.push(...statementProblems(statement));
  return problems;
}

export class TenantSqlError extends Error {
  constructor(sql: string, problems: string[]) {
    super(`a statement does not carry the tenant:\n  ${problems.join('\n  ')}\nstatement: ${squeeze(sql)}`);
    this.name = 'TenantSqlError';
  }
}

/** Throws TenantSqlError when the statement does not pass: what the test apps' guard calls on every statement. */
export function assertTenantSql(sql: string): void {
  const problems = tenantProblems(sql);
  if (problems.length > 0) throw new TenantSqlError(sql, problems);
}

const squeeze = (text: string): string => text.replace(/\s+/g, ' ').replace(/\( /g, '(').replace(/ \)/g, ')').trim();

/**
 * Comments out, string literals emptied (`''`), quoted identifiers kept, dollar-quoted bodies taken out and
 * returned for their own reading.
 */
function scan(sql: string): { text: string; bodies: string[] } {
  let text = '';
  const bodies: string[] = [];
  let i = 0;
  while (i < sql.length) {
    const rest = sql.slice(i, i + 2);
    if (rest === '--') {
      const end = sql.indexOf('\n', i);
      i = end < 0 ? sql.length : end;
      text += ' ';
    } else if (rest === '/*') {
      const end = sql.indexOf('*/', i + 2);
      i = end < 0 ? sql.length : end + 2;
      text += ' ';
    } else if (sql[i] === "'") {
      i = closing(sql, i, "'");
      text += "''";
    } else if (sql[i] === '"' || sql[i] === '`') {
      const end = closing(sql, i, sql[i] as string);
      text += sql.slice(i, end);
      i = end;
    } else {
      const tag = sql[i] === '$' ? /^\$(?:[A-Za-z_]\w*)?\$/.exec(sql.slice(i))?.[0] : undefined;
      if (tag === undefined) {
        text += sql[i];
        i += 1;
        continue;
      }
      const end = sql.indexOf(tag, i + tag.length);
      const stop = end < 0 ? sql.length : end;
      bodies.push(sql.slice(i + tag.length, stop));
      text += "''";
      i = end < 0 ? sql.length : end + tag.length;
    }
  }
  return { text, bodies };
}

/** The index just past the quote that closes the one at `start` (a doubled quote is an escaped one). */
function closing(sql: string, start: number, quote: string): number {
  let i = start + 1;
  while (i < sql.length) {
    if (sql[i] === quote) {
      if (sql[i + 1] !== quote) return i + 1;
      i += 2;
    } else i += 1;
  }
  return sql.length;
}

const splitStatements = (text: string): string[] => text.split(';').map(squeeze).filter((statement) => statement !== '');

const DDL = /^(CREATE|ALTER|DROP|COMMENT|PRAGMA|ANALYZE|VACUUM|REINDEX|GRANT|REVOKE|TRUNCATE)\b/i;
const REFERENCE = new RegExp(String.raw`(?:\b(FROM|JOIN|INTO|UPDATE)|(,))\s+(?:ONLY\s+)?(${TENANT_TABLES.join('|')})\b(?!\s*\.)`, 'gi');
const ALIAS = /^\s+(?:AS\s+)?([A-Za-z_]\w*)/i;
const NOT_ALIAS = new Set(
  ('WHERE SET ON USING ORDER GROUP LIMIT OFFSET JOIN LEFT RIGHT INNER OUTER CROSS FULL NATURAL LATERAL UNION INTERSECT ' +
    'EXCEPT RETURNING VALUES SELECT DEFAULT WINDOW HAVING FOR INDEXED NOT FETCH WITH DO AND OR')
    .split(' '),
);
const QUERY_WORDS = /\b(SELECT|FROM|INSERT|UPDATE|DELETE|WITH)\b/i;
const SET_OPERATOR = /\b(UNION|INTERSECT|EXCEPT)\b/gi;

function statementProblems(statement: string): string[] {
  if (DDL.test(statement)) return [];
  const allowed = ALLOWED.find(({ pattern }) => pattern.test(statement));
  if (allowed !== undefined) {
    // A column, not a constant named tenant ('' AS tenant): in the select list or RETURNING.
    const selectsTenant = /\bSELECT\b.*(?<!\bAS\s+)(?<![\w.])(\w+\.)?tenant\b.*\bFROM\b|\bRETURNING\b.*(?<!\bAS\s+)(?<![\w.])(\w+\.)?tenant\b/i.test(statement);
    return allowed.routes === true && !selectsTenant ? [`${allowed.name}: returns rows to route but does not select tenant`] : [];
  }
  const groups = parenGroups(statement);
  const problems: string[] = [];
  for (const match of statement.matchAll(REFERENCE)) {
    const table = match[3] as string;
    const end = match.index + match[0].length;
    const aliased = ALIAS.exec(statement.slice(end));
    const alias = aliased !== null && !NOT_ALIAS.has((aliased[1] as string).toUpperCase()) ? (aliased[1] as string) : undefined;
    const after = alias === undefined ? end : end + (aliased?.[0].length ?? 0);
    const keyword = (match[1] ?? ',').toUpperCase();
    const problem =
      keyword === 'INTO' ? insertProblem(statement, after, table) : conditionProblem(statement, groups, match.index, table, alias);
    if (problem !== undefined) problems.push(problem);
  }
  return problems;
}

function insertProblem(statement: string, after: number, table: string): string | undefined {
  const list = /^\s*\(([^()]*)\)/.exec(statement.slice(after));
  const columns = list?.[1]?.split(',').map((column) => column.trim().replace(/^"|"$/g, '').toLowerCase()) ?? [];
  return columns.includes('tenant') ? undefined : `INSERT INTO ${table} names no tenant column: ${clip(statement, after)}`;
}

function conditionProblem(statement: string, groups: Map<number, number>, at: number, table: string, alias: string | undefined): string | undefined {
  const [start, stop] = ownQuery(statement, groups, at);
  const text = flatten(statement, groups, start, stop).replace(/\bSET\b.*?(?=\bWHERE\b|\bFROM\b|\bRETURNING\b|$)/gi, ' ');
  const q = `(?<![\\w.])(?:(?:${alias ?? table})\\.)?tenant\\b`;
  const item = `\\(\\s*(?:[^()]*,\\s*)?${q}\\s*(?:,[^()]*)?\\)`;
  const conditions = [
    `${q}\\s*(?:==?|\\bIS\\b(?!\\s+NOT)|\\bIN\\b)`,
    `(?<![<>!])==?\\s*${q}`,
    `${item}\\s*(?:==?|<=?|>=?|\\bIN\\b)`,
    `(?:==?|<=?|>=?|\\bIN\\b)\\s*${item}`,
    `\\bUSING\\s*\\([^()]*\\btenant\\b[^()]*\\)`,
  ];
  if (conditions.some((condition) => new RegExp(condition, 'i').test(text))) return undefined;
  return `${table}${alias === undefined ? '' : ` ${alias}`} read or written without a tenant condition: ${squeeze(text).slice(0, 160)}`;
}

/** Each opening parenthesis's index mapped to its closing one's. */
function parenGroups(statement: string): Map<number, number> {
  const groups = new Map<number, number>();
  const open: number[] = [];
  for (let i = 0; i < statement.length; i += 1) {
    if (statement[i] === '(') open.push(i);
    else if (statement[i] === ')') {
      const start = open.pop();
      if (start !== undefined) groups.set(start, i);
    }
  }
  return groups;
}

/** The range of the (sub)query a reference at `at` belongs to: its innermost group, narrowed to its UNION branch. */
function ownQuery(statement: string, groups: Map<number, number>, at: number): [number, number] {
  let start = 0;
  let stop = statement.length;
  for (const [open, close] of groups) if (open < at && close > at && open >= start) [start, stop] = [open + 1, close];
  const flat = flatten(statement, groups, start, stop, true);
  let branchStart = start;
  let branchStop = stop;
  for (const operator of flat.matchAll(SET_OPERATOR)) {
    const index = start + operator.index;
    if (index < at) branchStart = index + operator[0].length;
    else if (index < branchStop) branchStop = index;
  }
  return [branchStart, branchStop];
}

/**
 * The text of [start, stop) with each nested group that is a query of its own blanked to `(…)` (its conditions
 * are not this query's); groups without one (a column list, a row, ANY(…)) stay. `keepLength` pads the blank so
 * indices still line up.
 */
function flatten(statement: string, groups: Map<number, number>, start: number, stop: number, keepLength = false): string {
  let text = '';
  let i = start;
  while (i < stop) {
    const close = statement[i] === '(' ? groups.get(i) : undefined;
    if (close === undefined || close >= stop) {
      text += statement[i];
      i += 1;
      continue;
    }
    const inner = statement.slice(i, close + 1);
    text += !QUERY_WORDS.test(inner) ? inner : keepLength ? `(${' '.repeat(inner.length - 2)})` : '(…)';
    i = close + 1;
  }
  return text;
}

const clip = (statement: string, from: number): string => squeeze(statement.slice(Math.max(0, from - 60), from + 100));
