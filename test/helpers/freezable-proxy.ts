import { type AddressInfo, createConnection, createServer, type Server, type Socket } from 'node:net';

/**
 * A TCP proxy a test controls: frozen, it stops forwarding in both directions without closing
 * anything (a NAT that dropped the connection, a partition), new connections included; thawed, it
 * delivers what it held, in order, and forwards again. A side that closes closes the other.
 */
export class FreezableProxy {
  frozen = false;
  /** Connections accepted so far. */
  accepted = 0;
  private readonly held: { to: Socket; chunk: Buffer }[] = [];
  private readonly sockets = new Set<Socket>();
  private server: Server | undefined;

  constructor(
    private readonly targetHost: string,
    private readonly targetPort: number,
  ) {}

  /** Listens on a free port of 127.0.0.1; returns it. */
  async start(): Promise<number> {
    const server = createServer((client) => {
      this.accepted += 1;
      const upstream = createConnection({ host: this.targetHost, port: this.targetPort });
      this.forward(client, upstream);
      this.forward(upstream, client);
    });
    this.server = server;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return (server.address() as AddressInfo).port;
  }

  private forward(from: Socket, to: Socket): void {
    this.sockets.add(from);
    from.on('data', (chunk: Buffer) => {
      if (this.frozen) this.held.push({ to, chunk });
      else if (!to.destroyed) to.write(chunk);
    });
    from.on('close', () => {
      this.sockets.delete(from);
      to.destroy();
    });
    from.on('error', () => from.destroy());
  }

  freeze(): void {
    this.frozen = true;
  }

  thaw(): void {
    this.frozen = false;
    for (const { to, chunk } of this.held.splice(0)) if (!to.destroyed) to.write(chunk);
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}
