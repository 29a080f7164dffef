import { describe, expect, it } from 'vitest';
import { blockedAddressReason } from './ip-policy.js';

describe('blockedAddressReason', () => {
  it.each([
    ['127.0.0.1', 'loopback address'],
    ['127.255.255.254', 'loopback address'],
    ['10.0.0.1', 'private address'],
    ['10.255.255.255', 'private address'],
    ['172.16.0.1', 'private address'],
    ['172.31.255.255', 'private address'],
    ['192.168.0.1', 'private address'],
    ['169.254.1.1', 'link-local address'],
    ['169.254.169.254', 'cloud metadata address'],
    ['169.254.170.2', 'cloud metadata address'],
    ['100.100.100.200', 'cloud metadata address'],
    ['100.64.0.1', 'shared (carrier-grade NAT) address'],
    ['0.0.0.0', 'unspecified address'],
    ['0.1.2.3', 'unspecified address'],
    ['192.0.0.8', 'IETF protocol address'],
    ['192.0.2.1', 'documentation address'],
    ['198.51.100.7', 'documentation address'],
    ['203.0.113.9', 'documentation address'],
    ['198.18.0.1', 'benchmarking address'],
    ['224.0.0.1', 'multicast address'],
    ['239.255.255.250', 'multicast address'],
    ['240.0.0.1', 'reserved address'],
    ['255.255.255.255', 'reserved address'],
    ['::1', 'loopback address'],
    ['::', 'unspecified address'],
    ['fc00::1', 'unique-local address'],
    ['fd12:3456::1', 'unique-local address'],
    ['fd00:ec2::254', 'cloud metadata address'],
    ['FD00:EC2:0:0:0:0:0:254', 'cloud metadata address'],
    ['fe80::1', 'link-local address'],
    ['fe80::1%eth0', 'link-local address'],
    ['febf::1', 'link-local address'],
    ['fec0::1', 'site-local address'],
    ['ff02::1', 'multicast address'],
    ['2001:db8::1', 'documentation address'],
    ['100::1', 'discard address'],
    // IPv4 inside IPv6 is judged by the IPv4 address.
    ['::ffff:127.0.0.1', 'loopback address'],
    ['::ffff:7f00:1', 'loopback address'],
    // IPv4-translated (::ffff:0:0/96) is judged by its IPv4 address too.
    ['::ffff:0:127.0.0.1', 'loopback address'],
    ['::ffff:0:a9fe:a9fe', 'cloud metadata address'],
    ['::ffff:0:10.1.2.3', 'private address'],
    ['::FFFF:10.0.0.1', 'private address'],
    ['::ffff:169.254.169.254', 'cloud metadata address'],
    ['64:ff9b::10.0.0.1', 'private address'],
    ['64:ff9b::7f00:1', 'loopback address'],
    ['2002:7f00:1::', 'loopback address'],
    ['2002:c0a8:101::1', 'private address'],
    ['::127.0.0.1', 'loopback address'],
    ['::10.1.1.1', 'private address'],
  ])('refuses %s (%s)', (address, reason) => {
    expect(blockedAddressReason(address)).toBe(reason);
  });

  it.each([
    '1.1.1.1',
    '8.8.8.8',
    '93.184.216.34',
    '172.15.255.255',
    '172.32.0.0',
    '192.167.255.255',
    '192.169.0.0',
    '100.63.255.255',
    '100.128.0.0',
    '169.253.255.255',
    '223.255.255.255',
    '2606:4700:4700::1111',
    '2a00:1450:4001:80b::200e',
    '::ffff:8.8.8.8',
    '64:ff9b::808:808',
    '2002:808:808::1',
    'fbff::1',
    'fe7f::1',
  ])('allows the public address %s', (address) => {
    expect(blockedAddressReason(address)).toBeNull();
  });

  it.each(['', 'localhost', 'example.com', '127.0.0.1.', '256.0.0.1', '1.2.3', '::ffff::1', 'gggg::1'])('refuses the non-address %j', (value) => {
    expect(blockedAddressReason(value)).toBe('not an IP address');
  });
});
