import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { HIDDEN, safeHttpsUrl, vis, visLine } from '../src/escape';

test('the hidden characters are the web view’s (cli/src/web/assets/app.js)', () => {
  const app = readFileSync(join(__dirname, '../../../cli/src/web/assets/app.js'), 'utf8');
  const m = app.match(/\.replace\(\s*(\/\[\\u0000[^\n]*\/gu),/);
  assert.ok(m, 'app.js still has its class');
  assert.equal(m[1], HIDDEN.toString());
});

test('control, bidi and invisible characters become visible; markup stays text', () => {
  assert.equal(vis('a\u001b[31mb'), 'a^[[31mb');
  assert.equal(vis('x\ry'), 'x\\ry');
  assert.equal(vis('evil\u202egnp.exe'), 'evil\\u202egnp.exe');
  assert.equal(vis('zero\u200bwidth'), 'zero\\u200bwidth');
  assert.equal(vis('del\u007f'), 'del^?');
  assert.equal(vis('two\nlines\tand tab'), 'two\nlines\tand tab');
  assert.equal(visLine('two\nlines\tand tab'), 'two\\nlines\\tand tab');
  assert.equal(vis('<img src=x onerror=alert(1)>'), '<img src=x onerror=alert(1)>');
  assert.equal(vis(undefined), '');
});

test('the hidden characters are the controls, Unicode’s default-ignorable ones and U+2028/U+2029', () => {
  // The JavaScript engine's Unicode data (ICU) checks the hand table (cli/src/invisible.rs).
  const want = /^[\p{Cc}\p{Default_Ignorable_Code_Point}\u2028\u2029]$/u;
  const one = new RegExp(`^${HIDDEN.source}$`, 'u');
  const differ: string[] = [];
  for (let n = 0; n <= 0x10ffff; n++) {
    if (n >= 0xd800 && n <= 0xdfff) continue; // surrogates are no characters
    const c = String.fromCodePoint(n);
    if (want.test(c) !== one.test(c)) differ.push('U+' + n.toString(16).toUpperCase());
  }
  assert.deepEqual(differ, []);
});

test('issue 48: tag characters, variation selectors, Hangul fillers, soft hyphen become visible', () => {
  assert.equal(vis('flag\u{e0001}\u{e0067}\u{e007f}'), 'flag\\u{e0001}\\u{e0067}\\u{e007f}');
  assert.equal(vis('\u2764\ufe0f vs\u{e0100}\u{e01ef}'), '\u2764\\ufe0f vs\\u{e0100}\\u{e01ef}');
  assert.equal(vis('\u115f\u1160h\u3164\uffa0'), '\\u115f\\u1160h\\u3164\\uffa0');
  assert.equal(visLine('soft\u00adhy\u034f k\u17b4\u17b5'), 'soft\\u00adhy\\u034f k\\u17b4\\u17b5');
  assert.equal(vis('한글 🚀 שלום'), '한글 🚀 שלום');
});

test('only plain https references become links', () => {
  assert.equal(safeHttpsUrl('https://docs.example/x#y'), 'https://docs.example/x#y');
  assert.equal(safeHttpsUrl('javascript:alert(1)'), undefined);
  assert.equal(safeHttpsUrl('http://insecure.example'), undefined);
  assert.equal(safeHttpsUrl('https://a.example/ javascript:x'), undefined);
  assert.equal(safeHttpsUrl(42), undefined);
});
