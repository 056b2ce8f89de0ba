import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import { human, shortDuration, utc } from '../src/format';

test('durations as oc shortens them', () => {
  assert.equal(shortDuration(0), 'now');
  assert.equal(shortDuration(0.5), 'now');
  assert.equal(shortDuration(45), '45s');
  assert.equal(shortDuration(120), '2m');
  assert.equal(shortDuration(3930), '1h5m30s');
  assert.equal(shortDuration(7200), '2h');
  assert.equal(shortDuration(3610), '1h0m10s');
  assert.equal(shortDuration(-5), 'now');
});

test('ages as kubectl prints AGE (the fleet’s LAST REPORT)', () => {
  assert.equal(human(-2), '<invalid>');
  assert.equal(human(59), '59s');
  assert.equal(human(150), '2m30s');
  assert.equal(human(600), '10m');
  assert.equal(human(4 * 3600 + 60 * 5), '4h5m');
  assert.equal(human(30 * 3600), '30h');
  assert.equal(human(3 * 86400 + 3600), '3d1h');
});

test('instants in UTC', () => {
  assert.equal(utc('2024-02-27T12:12:27Z'), '2024-02-27 12:12:27 UTC');
  assert.equal(utc('garbage'), '-');
  assert.equal(utc(undefined), '-');
});
