// Strings from the cluster (names, messages) are shown as text: React inserts them as text
// nodes, never as markup (no dangerouslySetInnerHTML anywhere in the plugin). What text still
// hides is made visible, as the web view and the text output do (cli/src/escape.rs,
// cli/src/web/assets/app.js `vis`, whose class test/escape.test.ts checks this one against):
// ESC ^[, CR \r, other C0 ^X, DEL ^?, C1 controls and the characters that print nothing or move
// text (Unicode's default-ignorable ones: bidi overrides, isolates and marks, zero-width
// characters, BOM, soft hyphen, variation selectors, tag characters, Hangul fillers...; and
// U+2028/U+2029: cli/src/invisible.rs) \uXXXX, beyond U+FFFF \u{XXXXX}.
// Line feeds and tabs are kept (the elements showing messages preserve them, CSS
// white-space: pre-wrap); `line` escapes them too (\n, \t), for one-line cells.

export const HIDDEN =
  /[\u0000-\u001f\u007f-\u009f\u00ad\u034f\u061c\u115f-\u1160\u17b4-\u17b5\u180b-\u180f\u200b-\u200f\u2028-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff0-\ufff8\u{1bca0}-\u{1bca3}\u{1d173}-\u{1d17a}\u{e0000}-\u{e0fff}]/gu;

export const vis = (s: unknown, line = false): string =>
  String(s ?? '').replace(HIDDEN, (c) => {
    const n = c.codePointAt(0) ?? 0;
    if (c === '\n') return line ? '\\n' : '\n';
    if (c === '\t') return line ? '\\t' : '\t';
    if (c === '\r') return '\\r';
    if (n < 0x20) return '^' + String.fromCharCode(n + 64);
    if (n === 0x7f) return '^?';
    return n > 0xffff ? '\\u{' + n.toString(16) + '}' : '\\u' + n.toString(16).padStart(4, '0');
  });

/** One-line text (names, table cells). */
export const visLine = (s: unknown): string => vis(s, true);

/** A remediation reference becomes a link only when it is a plain https URL. */
export const safeHttpsUrl = (s: unknown): string | undefined =>
  typeof s === 'string' && /^https:\/\/[^\s]+$/.test(s) ? s : undefined;
