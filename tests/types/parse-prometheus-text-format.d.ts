declare module 'parse-prometheus-text-format' {
  export type Sample = { value?: string; labels?: Record<string, string>; buckets?: Record<string, string>; count?: string; sum?: string };
  export type Family = { name: string; help: string; type: 'COUNTER' | 'GAUGE' | 'HISTOGRAM' | 'SUMMARY' | 'UNTYPED'; metrics: Sample[] };
  /** Throws on any line that is not valid Prometheus text exposition. */
  export default function parsePrometheusTextFormat(text: string): Family[];
}
