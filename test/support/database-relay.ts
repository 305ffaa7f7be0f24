import net from 'node:net';

/** One connection through the relay: the app's side and the database's. */
export interface RelayedConnection {
  readonly app: net.Socket;
  readonly database: net.Socket;
}

/** What the relay does with bytes on a connection: pass them on, or drop them (a rule may also end the connection itself). */
export interface RelayRules {
  fromApp?(chunk: Buffer, connection: RelayedConnection): 'pass' | 'drop';
  fromDatabase?(chunk: Buffer, connection: RelayedConnection): 'pass' | 'drop';
}

/**
 * A TCP relay on loopback in front of the test PostgreSQL server, for tests of what the program
 * does when its database connections fail: the rules drop or cut what passes, `closeAll` ends every
 * connection and stops taking new ones (a database that refuses), `listen` takes them again.
 */
export class DatabaseRelay {
  private listener: net.Server | undefined;
  private port = 0;
  readonly connections = new Set<RelayedConnection>();
  /** Connections accepted since the relay was made. */
  accepted = 0;

  constructor(
    private readonly target: URL,
    private readonly rules: RelayRules = {},
  ) {}

  /** Takes connections, on the port it had before when it had one. */
  async listen(): Promise<void> {
    const listener = net.createServer((app) => this.relay(app));
    await new Promise<void>((resolve) => listener.listen(this.port, '127.0.0.1', resolve));
    this.port = (listener.address() as net.AddressInfo).port;
    this.listener = listener;
  }

  /** `url` with the relay's address instead of the database server's. */
  address(url: string): string {
    const relayed = new URL(url);
    relayed.hostname = '127.0.0.1';
    relayed.port = String(this.port);
    return relayed.toString();
  }

  /** Ends every connection now (without a reset). */
  destroyAll(): void {
    for (const { app, database } of this.connections) {
      app.destroy();
      database.destroy();
    }
  }

  /** Stops taking connections and ends every open one. */
  async closeAll(): Promise<void> {
    const listener = this.listener;
    this.listener = undefined;
    const closed = listener ? new Promise<void>((resolve) => listener.close(() => resolve())) : Promise.resolve();
    this.destroyAll();
    await closed;
  }

  private relay(app: net.Socket): void {
    this.accepted += 1;
    const database = net.connect(Number(this.target.port || 5432), this.target.hostname);
    const connection = { app, database };
    this.connections.add(connection);
    app.on('data', (chunk: Buffer) => {
      if ((this.rules.fromApp?.(chunk, connection) ?? 'pass') === 'pass') database.write(chunk);
    });
    database.on('data', (chunk: Buffer) => {
      if ((this.rules.fromDatabase?.(chunk, connection) ?? 'pass') === 'pass') app.write(chunk);
    });
    for (const [socket, other] of [
      [app, database],
      [database, app],
    ] as const) {
      socket.on('error', () => other.destroy());
      socket.on('close', () => {
        other.destroy();
        this.connections.delete(connection);
      });
    }
  }
}
