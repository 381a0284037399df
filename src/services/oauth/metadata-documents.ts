import { lookup as dnsLookup } from 'node:dns';
import { request as httpsRequest } from 'node:https';
import { BlockList, isIP, type LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';

/** A client id that names a Client ID Metadata Document: https, a path, nothing ambiguous. */
export function isMetadataDocumentUrl(clientId: string): boolean {
  if (!clientId.startsWith('https://') || clientId.length > 2000) return false;
  let url: URL;
  try {
    url = new URL(clientId);
  } catch {
    return false;
  }
  const segments = url.pathname.split('/');
  return (
    url.href === clientId &&
    url.pathname !== '/' &&
    !url.hash &&
    !url.username &&
    !url.password &&
    !segments.includes('.') &&
    !segments.includes('..')
  );
}

/** IPv4 addresses a fetched client metadata URL must never reach: private, loopback, link-local, reserved. */
const nonPublicIPv4 = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  nonPublicIPv4.addSubnet(network, prefix, 'ipv4');
}

/** IPv6 networks that are not public in themselves (the forms that carry an IPv4 address are checked by it). */
const nonPublicIPv6 = new BlockList();
for (const [network, prefix] of [
  // NAT64 for local use (RFC 8215): never global, whatever it carries.
  ['64:ff9b:1::', 48],
  ['100::', 64],
  ['2001:2::', 48],
  ['2001:db8::', 32],
  ['3fff::', 20],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
] as const) {
  nonPublicIPv6.addSubnet(network, prefix, 'ipv6');
}

/** The four bytes at `offset` of an IPv6 address, inverted for Teredo's obfuscated client address. */
const ipv4At = (bytes: number[], offset: number, inverted = false): string =>
  bytes.slice(offset, offset + 4).map((byte) => (inverted ? byte ^ 0xff : byte)).join('.');

/** IPv6 forms that carry an IPv4 address, by their prefix, and where it sits (RFC 4291, 6145, 6052, 3056, 4380). */
const ipv4Carriers: { network: [ipaddr.IPv6, number]; carried: (bytes: number[]) => string[] }[] = [
  // IPv4-mapped ::ffff:a.b.c.d, and IPv4-compatible ::a.b.c.d (:: and ::1 fall in 0.0.0.0/8).
  { network: ipaddr.IPv6.parseCIDR('::ffff:0:0/96'), carried: (bytes) => [ipv4At(bytes, 12)] },
  { network: ipaddr.IPv6.parseCIDR('::/96'), carried: (bytes) => [ipv4At(bytes, 12)] },
  // IPv4-translated (SIIT) ::ffff:0:a.b.c.d.
  { network: ipaddr.IPv6.parseCIDR('::ffff:0:0:0/96'), carried: (bytes) => [ipv4At(bytes, 12)] },
  // NAT64's well-known prefix 64:ff9b::a.b.c.d.
  { network: ipaddr.IPv6.parseCIDR('64:ff9b::/96'), carried: (bytes) => [ipv4At(bytes, 12)] },
  // 6to4 2002:AABB:CCDD::/48.
  { network: ipaddr.IPv6.parseCIDR('2002::/16'), carried: (bytes) => [ipv4At(bytes, 2)] },
  // Teredo 2001:0:SSSS:SSSS:…:~CCCC:~CCCC: the server's address, and the client's inverted.
  { network: ipaddr.IPv6.parseCIDR('2001::/32'), carried: (bytes) => [ipv4At(bytes, 4), ipv4At(bytes, 12, true)] },
];

/** The IPv4 addresses an IPv6 address carries (none for a plain IPv6 address). */
export function carriedIPv4(address: ipaddr.IPv6): string[] {
  const carrier = ipv4Carriers.find(({ network }) => address.match(network));
  return carrier ? carrier.carried(address.toByteArray()) : [];
}

/** Whether an address (IPv4 or IPv6, in any form that carries an IPv4 address) is one a fetch may reach. */
export function isPublicAddress(address: string): boolean {
  if (isIP(address) === 0) return false;
  const parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv4') return !nonPublicIPv4.check(parsed.toString(), 'ipv4');
  const ipv6 = parsed as ipaddr.IPv6;
  if (nonPublicIPv6.check(ipv6.toNormalizedString(), 'ipv6')) return false;
  return carriedIPv4(ipv6).every((ipv4) => !nonPublicIPv4.check(ipv4, 'ipv4'));
}

/** Resolves like dns.lookup, but fails when any address is not public, so a rebinding name cannot slip through. */
const publicOnlyLookup: LookupFunction = (hostname, options, callback) => {
  dnsLookup(hostname, { all: true, family: options.family ?? 0 }, (error, addresses) => {
    if (error) return callback(error, '', 0);
    if (addresses.length === 0 || addresses.some((a) => !isPublicAddress(a.address))) {
      return callback(new Error(`${hostname} resolves to a non-public address.`), '', 0);
    }
    if (options.all) return callback(null, addresses);
    return callback(null, addresses[0]!.address, addresses[0]!.family);
  });
};

const documentMaxBytes = 5 * 1024;
const documentTimeoutMs = 5_000;

export type DocumentFetcher = (url: string) => Promise<unknown>;

/** GETs a client metadata document: public addresses only, at most 5 KB, within 5 s, no redirects. */
export const fetchClientMetadataDocument: DocumentFetcher = (url) =>
  new Promise((resolve, reject) => {
    const host = new URL(url).hostname.replace(/^\[|\]$/g, '');
    if (isIP(host) && !isPublicAddress(host)) return reject(new Error(`${host} is not a public address.`));
    const request = httpsRequest(
      url,
      { method: 'GET', lookup: publicOnlyLookup, headers: { accept: 'application/json' }, signal: AbortSignal.timeout(documentTimeoutMs) },
      (response) => {
        if (response.statusCode !== 200) {
          response.resume();
          return reject(new Error(`The document answered ${response.statusCode}; redirects are not followed.`));
        }
        const chunks: Buffer[] = [];
        let size = 0;
        response.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > documentMaxBytes) request.destroy(new Error('The document is larger than 5 KB.'));
          else chunks.push(chunk);
        });
        response.on('end', () => {
          try {
            resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')));
          } catch {
            reject(new Error('The document is not JSON.'));
          }
        });
        response.on('error', reject);
      },
    );
    request.on('error', reject);
    request.end();
  });
