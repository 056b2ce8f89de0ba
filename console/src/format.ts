// Times as the text view writes them (assess/src/format.rs, cli/src/fleet/age.rs).

/** Go's Duration.String() of whole seconds, shortened as oc does: `1h5m30s`, `2h`, `5m`, `now`. */
export const shortDuration = (seconds: number): string => {
  const s = Math.max(0, Math.floor(seconds));
  if (s === 0) return 'now';
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const sec = s % 60;
  let out = h > 0 ? `${h}h${m}m${sec}s` : m > 0 ? `${m}m${sec}s` : `${sec}s`;
  if (out.endsWith('h0m0s')) out = out.slice(0, -4);
  else if (out.endsWith('m0s')) out = out.slice(0, -2);
  return out;
};

/** kubectl's AGE (k8s.io/apimachinery duration.HumanDuration), as `--fleet`'s LAST REPORT. */
export const human = (seconds: number): string => {
  if (seconds < -1) return '<invalid>';
  if (seconds < 0) return '0s';
  const s = Math.floor(seconds);
  if (s < 120) return `${s}s`;
  const minutes = Math.floor(s / 60);
  if (minutes < 10) return s % 60 === 0 ? `${minutes}m` : `${minutes}m${s % 60}s`;
  if (minutes < 180) return `${minutes}m`;
  const hours = Math.floor(s / 3600);
  if (hours < 8) return minutes % 60 === 0 ? `${hours}h` : `${hours}h${minutes % 60}m`;
  if (hours < 48) return `${hours}h`;
  if (hours < 24 * 8) return hours % 24 === 0 ? `${hours / 24}d` : `${Math.floor(hours / 24)}d${hours % 24}h`;
  if (hours < 24 * 365 * 2) return `${Math.floor(hours / 24)}d`;
  const days = Math.floor(hours / 24);
  if (hours < 24 * 365 * 8) return days % 365 === 0 ? `${days / 365}y` : `${Math.floor(days / 365)}y${days % 365}d`;
  return `${Math.floor(days / 365)}y`;
};

/** Seconds from `from` to `to` (RFC 3339), or undefined when either does not parse. */
export const secondsBetween = (from: string | undefined, to: Date): number | undefined => {
  if (!from) return undefined;
  const t = Date.parse(from);
  return Number.isNaN(t) ? undefined : (to.getTime() - t) / 1000;
};

/** `2024-02-27 12:12:27 UTC`, or `-`. */
export const utc = (t: string | undefined): string => {
  if (!t) return '-';
  const d = new Date(t);
  if (Number.isNaN(d.getTime())) return '-';
  return d.toISOString().replace('T', ' ').replace(/\.\d+Z$/, ' UTC');
};
