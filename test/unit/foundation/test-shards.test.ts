import { expect } from 'chai';
import { spawnSync } from 'child_process';
import fs from 'fs';
import os from 'os';
import path from 'path';
import { partition, timingKey, writeTimings } from '../../../scripts/test-shards';

/** A scratch project root holding only test/timings.json (what partition and writeTimings read). */
function rootWith(timings: Record<string, number> | undefined): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'gw-timings-'));
  fs.mkdirSync(path.join(root, 'test'));
  if (timings) fs.writeFileSync(path.join(root, 'test', 'timings.json'), JSON.stringify(timings));
  return root;
}

const file = (key: string) => path.join('dist', 'test', key.replace(/\.ts$/, '.js'));

describe('the test run: shards split by test/timings.json, and the timings measured', () => {
  it('keys a compiled file by its source path under test/', () => {
    expect(timingKey('dist/test/integration/chat/lanes.test.js')).to.equal('integration/chat/lanes.test.ts');
    expect(timingKey('dist\\test\\unit\\x.test.js')).to.equal('unit/x.test.ts');
  });

  it('puts the longest files first onto the least loaded shard, a file without a time at 1.5 s', () => {
    const root = rootWith({ 'a.test.ts': 30, 'b.test.ts': 20, 'c.test.ts': 12, 'd.test.ts': 9 });
    const files = ['a', 'b', 'c', 'd', 'new'].map((n) => file(`${n}.test.ts`));
    const [one, two] = partition(files, 2, root);
    // a 30 | b 20; c onto b's (32); d onto a's (39); new onto b's (33.5); the second shard begun half-way through its names
    expect(one.map(timingKey)).to.deep.equal(['a.test.ts', 'd.test.ts']);
    expect(two.map(timingKey)).to.deep.equal(['c.test.ts', 'new.test.ts', 'b.test.ts']);
  });

  it('runs each shard in name order from its own point, so the browser suites (e2e/, first by name) are not all at the start at once', () => {
    const names = [...Array.from({ length: 3 }, (_, i) => `e2e/b${i}.test.ts`), ...Array.from({ length: 9 }, (_, i) => `integration/x${i}.test.ts`)];
    const root = rootWith(Object.fromEntries(names.map((k) => [k, 10])));
    const shards = partition(names.map(file), 3, root);
    const firstBrowser = shards.map((s) => s.map(timingKey).findIndex((k) => k.startsWith('e2e/')));
    // one browser suite a shard: first in the first shard, later in each of the others (each begun at i/3 of its list, wrapping)
    expect(shards.map((s) => s.length)).to.deep.equal([4, 4, 4]);
    expect(firstBrowser).to.deep.equal([0, 3, 2]);
    expect(shards.flat().map(timingKey).sort(), 'every file once').to.deep.equal([...names].sort());
  });

  it('rewrites test/timings.json from the measured files: new times win, unmeasured files keep theirs, deselected ones go', () => {
    const root = rootWith({ 'a.test.ts': 30, 'b.test.ts': 20, 'gone.test.ts': 5 });
    const out1 = path.join(root, 's1.json');
    const out2 = path.join(root, 's2.json');
    fs.writeFileSync(out1, JSON.stringify({ 'a.test.ts': 3.25 }));
    fs.writeFileSync(out2, JSON.stringify({ 'c.test.ts': 41 }));
    writeTimings([out1, out2, path.join(root, 'never-written.json')], ['a', 'b', 'c'].map((n) => file(`${n}.test.ts`)), root);
    const text = fs.readFileSync(path.join(root, 'test', 'timings.json'), 'utf8');
    expect(JSON.parse(text)).to.deep.equal({ 'c.test.ts': 41, 'b.test.ts': 20, 'a.test.ts': 3.3 });
    expect(Object.keys(JSON.parse(text)), 'longest first').to.deep.equal(['c.test.ts', 'b.test.ts', 'a.test.ts']);
  });

  it("the run's reporter measures each file's wall time, its hooks included, and keeps mocha's spec output", function () {
    this.timeout(20_000);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gw-timing-run-'));
    try {
      const slow = path.join(dir, 'slow.test.js');
      fs.writeFileSync(slow, `
        describe('slow', () => {
          before((done) => setTimeout(done, 400));
          it('passes', () => {});
        });
        describe('slow, second part', () => { it('waits', (done) => setTimeout(done, 200)); });`);
      fs.writeFileSync(path.join(dir, 'quick.test.js'), `describe('quick', () => { it('passes', () => {}); });`);
      const out = path.join(dir, 'timings.json');
      const mocha = require.resolve('mocha/bin/mocha.js');
      const run = spawnSync(process.execPath, [mocha, '--no-config', '--reporter', 'dist/test/helpers/timing-reporter.js', slow, path.join(dir, 'quick.test.js')], {
        env: { ...process.env, TEST_TIMINGS_OUT: out },
        encoding: 'utf8',
      });
      expect(run.status, run.stderr).to.equal(0);
      expect(run.stdout, run.stdout).to.match(/^\s*3 passing/m);
      const times = JSON.parse(fs.readFileSync(out, 'utf8')) as Record<string, number>;
      const key = (name: string) => timingKey(path.relative(process.cwd(), path.join(dir, name)));
      expect(Object.keys(times).sort()).to.deep.equal([key('quick.test.js'), key('slow.test.js')].sort());
      expect(times[key('slow.test.js')], 'both top-level suites, the before hook included').to.be.within(0.6, 3);
      expect(times[key('quick.test.js')]).to.be.below(0.3);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it("ends a sharded run's output with each shard's failures: the test's title and its error, after the tally", function () {
    this.timeout(20_000);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gw-shard-fail-'));
    try {
      const good = path.join(dir, 'good.test.js');
      const bad = path.join(dir, 'bad.test.js');
      fs.writeFileSync(good, `describe('good', () => { it('passes', () => {}); });`);
      fs.writeFileSync(bad, `describe('bad', () => { it('passes', () => {}); it('breaks on purpose', () => { throw new Error('the reason it broke'); }); });`);
      const shards = [good, bad].map((f, i) => ({ index: i + 1, args: ['--no-config', f], env: process.env }));
      const script = `require(${JSON.stringify(path.resolve('dist/scripts/test-shards.js'))})
        .runShards(${JSON.stringify(require.resolve('mocha/bin/mocha.js'))}, ${JSON.stringify(shards)}).then((c) => process.exit(c));`;
      const run = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8' });
      expect(run.status, run.stderr).to.equal(1);
      const tail = run.stdout.slice(run.stdout.indexOf('all 2 shards:'));
      expect(tail, run.stdout).to.match(/^\s*2 passing/m).and.to.match(/^\s*1 failing/m);
      const after = tail.slice(tail.indexOf('1 failing'));
      expect(after, tail).to.include('shard 2:').and.include('breaks on purpose').and.include('the reason it broke');
      expect(after).not.to.include('shard 1:');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
