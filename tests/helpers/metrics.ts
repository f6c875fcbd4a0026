import parsePrometheusTextFormat, { type Family } from 'parse-prometheus-text-format';

export type Series = { name: string; labels: Record<string, string>; value: number };
export type Scrape = { status: number; contentType: string | null; families: Family[]; series: Series[] };

/**
 * GET the scrape URL and parse the whole exposition with parse-prometheus-text-format: a malformed line throws.
 * That parser folds a labelled histogram's series into one, so the samples are read a second time with the
 * histogram and summary TYPE lines left out: each _bucket, _sum and _count line is then a series of its own.
 */
export async function scrape(url: string): Promise<Scrape> {
  const response = await fetch(url);
  const text = await response.text();
  const families = parsePrometheusTextFormat(text);
  const untyped = text
    .split('\n')
    .filter((line) => !/^# TYPE \S+ (histogram|summary)$/.test(line))
    .join('\n');
  const series = parsePrometheusTextFormat(untyped).flatMap((entry) =>
    entry.metrics.map((metric) => ({ name: entry.name, labels: metric.labels ?? {}, value: Number(metric.value) })),
  );
  return { status: response.status, contentType: response.headers.get('content-type'), families, series };
}

export function family(scraped: Scrape, name: string): Family {
  const found = scraped.families.find((entry) => entry.name === name);
  if (found === undefined) throw new Error(`no metric ${name} in the scrape`);
  return found;
}

const has = (labels: Record<string, string>, wanted: Record<string, string>) =>
  Object.entries(wanted).every(([key, value]) => labels[key] === value);

/** The value of the one series of that name whose labels include these; undefined when there is none. */
export function valueOf(scraped: Scrape, name: string, labels: Record<string, string> = {}): number | undefined {
  const found = scraped.series.filter((entry) => entry.name === name && has(entry.labels, labels));
  if (found.length > 1) throw new Error(`${found.length} series of ${name} match ${JSON.stringify(labels)}`);
  return found[0]?.value;
}

/** A histogram's buckets for these labels, in exposition order: [le, cumulative count]. */
export function bucketsOf(scraped: Scrape, name: string, labels: Record<string, string> = {}): [string, number][] {
  return scraped.series
    .filter((entry) => entry.name === `${name}_bucket` && has(entry.labels, labels))
    .map((entry) => [entry.labels.le ?? '', entry.value]);
}
