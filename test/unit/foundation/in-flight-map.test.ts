import { expect } from 'chai';
import path from 'path';
import { InFlightMap } from '../../../shared/in-flight-map';
import { expectDiesYoung, promotedByScript } from '../../helpers/gc-trace';

/**
 * A child process holding per-request entries in a long-lived map, as a web pod holds its awaited
 * replies: each turn adds 20 entries (a request's worth of objects each) and removes those older than
 * the 64 newest, for `turns` turns, with the web pod's young generation (Procfile: 16 MB semi-spaces).
 * Returns what its scavenges promoted, from V8's own trace. The run is counted in turns, not in time:
 * a Map's old tables are kept alive only once one of them is in the old generation, which takes some
 * 10,000-15,000 turns here; a run bounded by time on a busy machine (a CI shard beside another) did
 * too few turns to get there (362 KB a scavenge once, 40 KB in a run beside three busy loops).
 */
function promotedWith(kind: 'Map' | 'InFlightMap', turns: number): { scavenges: number; promotedKbPerScavenge: number } {
  const modulePath = path.join(__dirname, '..', '..', '..', 'shared', 'in-flight-map.js');
  const script = `
    const { InFlightMap } = require(${JSON.stringify(modulePath)});
    const m = ${kind === 'Map' ? 'new Map()' : 'new InFlightMap()'};
    const ring = new Array(64).fill(null);
    let seq = 0, at = 0, n = 0;
    const request = () => ({ handlers: Array.from({ length: 30 }, (_, j) => ({ j, onResult: () => j })) });
    (function turn() {
      for (let i = 0; i < 20; i++) {
        if (ring[at] !== null) m.delete(ring[at]);
        const id = 'req_' + seq++;
        m.set(id, request());
        ring[at] = id;
        at = (at + 1) % ring.length;
      }
      if (++n < ${turns}) setImmediate(turn);
    })();`;
  return promotedByScript(script, ['--max-semi-space-size=16']);
}

describe('InFlightMap (shared/in-flight-map.ts)', function () {
  this.timeout(120_000);

  it('keeps, finds and forgets entries as a Map does', () => {
    const m = new InFlightMap<{ n: number }>();
    expect(m.size).to.equal(0);
    expect(m.set('a', { n: 1 })).to.equal(m);
    m.set('b', { n: 2 }).set('a', { n: 3 }); // a key set again is replaced, not counted twice
    expect(m.size).to.equal(2);
    expect(m.get('a')).to.deep.equal({ n: 3 });
    expect(m.has('b')).to.equal(true);
    expect(m.has('c')).to.equal(false);
    expect(m.get('c')).to.equal(undefined);
    expect(m.delete('b')).to.equal(true);
    expect(m.delete('b')).to.equal(false);
    expect(m.size).to.equal(1);
    expect(m.keys()).to.deep.equal(['a']);
    expect(m.values()).to.deep.equal([{ n: 3 }]);
    expect(m.entries()).to.deep.equal([['a', { n: 3 }]]);
    m.clear();
    expect(m.size).to.equal(0);
    expect(m.keys()).to.deep.equal([]);
  });

  it('takes any string as a key, those Object.prototype names too, and walks copies that may be changed meanwhile', () => {
    const m = new InFlightMap<number>();
    for (const k of ['__proto__', 'constructor', 'toString', 'hasOwnProperty', '0', 'req_1']) m.set(k, 1);
    expect(m.size).to.equal(6);
    expect(m.has('valueOf')).to.equal(false);
    expect(m.get('constructor')).to.equal(1);
    for (const k of m.keys()) m.delete(k); // deleting while walking the keys
    expect(m.size).to.equal(0);
    expect(Object.getPrototypeOf(m.entries())).to.equal(Array.prototype);
  });

  it('lets ended requests die young, where a long-lived Map has them promoted (V8\'s own trace, in a child process)', () => {
    expectDiesYoung(
      { name: 'Map', run: () => promotedWith('Map', 20_000), aboveKb: 500, why: "if not, V8 no longer keeps a Map's old tables linked: InFlightMap may no longer be needed" },
      { name: 'InFlightMap', run: () => promotedWith('InFlightMap', 20_000) },
    );
  });
});
