import { describe, expect, it } from 'vitest';
import { NO_PRIVATE, parsePrivatePolicy } from '../../config/private-policy.js';
import { fenceCommands, networkFence, PRIVATE_IPV4_RANGES } from './sandbox-network.js';

const own = ['192.168.1.5/32', '203.0.113.7/32'];

describe('networkFence', () => {
  it('closes every private range and the host with false', () => {
    expect(networkFence(NO_PRIVATE, own)).toEqual({
      unreachable: [...PRIVATE_IPV4_RANGES, ...own],
      opened: [],
    });
  });

  it('opens every private range with true, but never the host', () => {
    expect(networkFence(parsePrivatePolicy('true'), own)).toEqual({ unreachable: own, opened: [] });
  });

  it('opens listed addresses and ranges inside a closed range through the gateway', () => {
    const fence = networkFence(parsePrivatePolicy('192.168.1.10, 172.16.4.0/22, nas.lan, fd00::/8'), own);
    expect(fence.opened).toEqual(['192.168.1.10/32', '172.16.4.0/22']);
    expect(fence.unreachable).toEqual([...PRIVATE_IPV4_RANGES, ...own]);
  });

  it('drops a closed range the list covers whole, instead of routing it twice', () => {
    const fence = networkFence(parsePrivatePolicy('10.0.0.0/8, 172.0.0.0/8, 0.0.0.0/0'), own);
    expect(fence.opened).toEqual([]);
    expect(fence.unreachable).toEqual(own);
    const ten = networkFence(parsePrivatePolicy('10.0.0.0/8, 10.1.0.0/16'), own);
    expect(ten.unreachable).not.toContain('10.0.0.0/8');
    expect(ten.opened).toEqual([]);
  });

  it('never opens the host, loopback or slirp’s own network, even when listed', () => {
    const fence = networkFence(
      parsePrivatePolicy('192.168.1.5, 127.0.0.1, 10.0.2.2, 10.0.2.0/24, ::ffff:10.0.2.3'),
      own,
    );
    expect(fence).toEqual({ unreachable: [...PRIVATE_IPV4_RANGES, ...own], opened: [] });
    // A range around the host's address opens the rest; the host's /32 still wins.
    const around = networkFence(parsePrivatePolicy('192.168.1.0/24'), own);
    expect(around.opened).toEqual(['192.168.1.0/24']);
    expect(around.unreachable).toContain('192.168.1.5/32');
  });

  it('reads IPv4-mapped ranges as their IPv4 range and clears host bits', () => {
    const fence = networkFence(parsePrivatePolicy('::ffff:192.168.9.0/120, 192.168.3.77/24'), []);
    expect(fence.opened).toEqual(['192.168.9.0/24', '192.168.3.0/24']);
  });
});

describe('fenceCommands', () => {
  it('puts the rules first, then closed routes, then opened ones (onlink: rule 101 refuses the gateway)', () => {
    const commands = fenceCommands(parsePrivatePolicy('192.168.1.10'), true, own);
    expect(commands.slice(0, 2)).toEqual([
      'rule add to 10.0.2.3/32 dport 53 lookup main pref 100',
      'rule add to 10.0.2.0/24 prohibit pref 101',
    ]);
    expect(commands).toContain('route add unreachable 192.168.0.0/16');
    expect(commands).toContain('route add unreachable 192.168.1.5/32');
    expect(commands.at(-1)).toBe('route add 192.168.1.10/32 via 10.0.2.2 dev tap0 onlink');
    expect(fenceCommands(NO_PRIVATE, false, [])[0]).toBe('rule add to 10.0.2.0/24 prohibit pref 101');
  });
});
