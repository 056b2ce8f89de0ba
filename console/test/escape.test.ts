import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { HIDDEN, safeHttpsUrl, vis, visLine } from '../src/escape';

test('the hidden characters are the web view’s (cli/src/web/assets/app.js)', () => {
  const app = readFileSync(join(__dirname, '../../../cli/src/web/assets/app.js'), 'utf8');
  const m = app.match(/\.replace\(\s*(\/\[\\u0000[^\n]*\/g),/);
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

test('only plain https references become links', () => {
  assert.equal(safeHttpsUrl('https://docs.example/x#y'), 'https://docs.example/x#y');
  assert.equal(safeHttpsUrl('javascript:alert(1)'), undefined);
  assert.equal(safeHttpsUrl('http://insecure.example'), undefined);
  assert.equal(safeHttpsUrl('https://a.example/ javascript:x'), undefined);
  assert.equal(safeHttpsUrl(42), undefined);
});
