import { lookup as dnsLookup } from 'node:dns';
import { request as httpsRequest } from 'node:https';
import { BlockList, isIP, type LookupFunction } from 'node:net';

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

/** Addresses a fetched client metadata URL must never reach: private, loopback, link-local, reserved. */
const nonPublic = new BlockList();
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
  nonPublic.addSubnet(network, prefix, 'ipv4');
}
// IPv4-mapped IPv6 addresses (::ffff:a.b.c.d) are checked against the IPv4 rules by BlockList itself.
for (const [network, prefix] of [
  ['::', 127],
  ['64:ff9b::', 96],
  ['100::', 64],
  ['2001:db8::', 32],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const) {
  nonPublic.addSubnet(network, prefix, 'ipv6');
}

export function isPublicAddress(address: string): boolean {
  const family = isIP(address);
  return family !== 0 && !nonPublic.check(address, family === 4 ? 'ipv4' : 'ipv6');
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
