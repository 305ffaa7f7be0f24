/** One point of a balance over time: after the record made at `at`, the balance was `value` (minor units). */
export interface BalancePoint {
  at: number;
  value: bigint;
}

/** Decimal string in major units → integer minor units (exact; the API never sends more decimals than the asset has). */
export function toMinor(amount: string, scale: number): bigint {
  const negative = amount.startsWith('-');
  const [whole = '0', fraction = ''] = (negative ? amount.slice(1) : amount).split('.');
  const minor = BigInt(whole) * 10n ** BigInt(scale) + BigInt((fraction + '0'.repeat(scale)).slice(0, scale) || '0');
  return negative ? -minor : minor;
}

export function fromMinor(value: bigint, scale: number): string {
  const negative = value < 0n;
  const digits = (negative ? -value : value).toString().padStart(scale + 1, '0');
  const text = scale === 0 ? digits : `${digits.slice(0, -scale)}.${digits.slice(-scale)}`;
  return negative ? `-${text}` : text;
}

/**
 * The AVAILABLE balance as a step line over time, drawn in SVG (no chart library: a polyline is
 * all it takes). The figure has a text alternative: the first and last values and their times.
 */
export function BalanceChart(props: { points: BalancePoint[]; scale: number; asset: string }) {
  const { points, scale, asset } = props;
  const first = points[0];
  const last = points[points.length - 1];
  if (!first || !last || points.length < 2) return <p class="muted">Not enough history for a chart yet.</p>;
  const width = 640;
  const height = 180;
  const pad = 28;
  const values = points.map((point) => Number(point.value));
  const min = Math.min(0, ...values);
  const max = Math.max(...values, min + 1);
  const t0 = first.at;
  const t1 = Math.max(last.at, t0 + 1);
  const x = (at: number) => pad + ((at - t0) / (t1 - t0)) * (width - 2 * pad);
  const y = (value: number) => height - pad - ((value - min) / (max - min)) * (height - 2 * pad);
  const steps: string[] = [];
  points.forEach((point, index) => {
    const previous = points[index - 1];
    if (previous) steps.push(`${x(point.at)},${y(Number(previous.value))}`);
    steps.push(`${x(point.at)},${y(Number(point.value))}`);
  });
  const description = `${asset} available balance from ${fromMinor(first.value, scale)} on ${new Date(first.at).toISOString()} to ${fromMinor(last.value, scale)} on ${new Date(last.at).toISOString()}, ${points.length - 2} change(s)`;
  return (
    <figure class="chart">
      <svg viewBox={`0 0 ${width} ${height}`} role="img" aria-label={description}>
        <line x1={pad} y1={y(0)} x2={width - pad} y2={y(0)} class="axis" />
        <polyline points={steps.join(' ')} class="line" />
        <text x={pad} y={14} class="label">
          {fromMinor(BigInt(Math.round(max)), scale)} {asset}
        </text>
        <text x={pad} y={height - 8} class="label">
          {new Date(t0).toISOString().slice(0, 16).replace('T', ' ')}
        </text>
        <text x={width - pad} y={height - 8} class="label end">
          {new Date(t1).toISOString().slice(0, 16).replace('T', ' ')}
        </text>
      </svg>
      <figcaption>{description}</figcaption>
    </figure>
  );
}
