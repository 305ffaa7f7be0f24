import type { AddressInfo } from 'node:net';
import { createTestApp, type TestAppOptions, type TestContext } from '../../../test/harness.js';
import { OpenBaaS, type OpenBaaSOptions, type paths } from '../src/index.js';

/**
 * The real app on a fresh database (PGlite, or PostgreSQL when the postgres project runs),
 * listening on a free port of 127.0.0.1, so the SDK talks to it over HTTP with the real fetch.
 */
export interface SdkServer {
  t: TestContext;
  baseUrl: string;
  /** An SDK client for client A (or the given key), with any further options. */
  sdk(options?: Partial<OpenBaaSOptions>): OpenBaaS;
  close(): Promise<void>;
}

export async function startSdkServer(options: TestAppOptions = {}): Promise<SdkServer> {
  // The delivery signatures carry the wall clock; the app's clock starts at it too.
  const t = await createTestApp({ clockStart: new Date().toISOString(), ...options });
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = t.app.server.address() as AddressInfo;
  const baseUrl = `http://127.0.0.1:${port}`;
  return {
    t,
    baseUrl,
    sdk: (given = {}) => new OpenBaaS({ apiKey: t.clientA.key, baseUrl, ...given }),
    close: () => t.close(),
  };
}

/** A fetch that records every request it passes on (method, URL, headers), for assertions. */
export function recordingFetch(): { fetch: (request: Request) => Promise<Response>; requests: Array<{ method: string; url: string; headers: Headers }> } {
  const requests: Array<{ method: string; url: string; headers: Headers }> = [];
  return {
    requests,
    fetch: (request) => {
      requests.push({ method: request.method, url: request.url, headers: new Headers(request.headers) });
      return fetch(request);
    },
  };
}

let sequence = 0;

type IndividualCustomerBody = NonNullable<paths['/v1/customers/individual']['post']['requestBody']>['content']['application/json'];

/** The body of an individual customer whom the sandbox's KYC approves at once (last name "Instant"). */
export function instantCustomer(firstName: string): IndividualCustomerBody {
  sequence += 1;
  return {
    email: `${firstName.toLowerCase()}.${Date.now()}.${sequence}@example.com`,
    phoneNumber: '212 555 0123',
    phoneCountryCode: '+1',
    kyc: {
      firstName,
      lastName: 'Instant',
      birthDate: '1990-12-10',
      nationality: 'US',
      documentSsn: '123-45-6789',
      mainAddress: { street1: '350 Fifth Avenue', cityCounty: 'New York', stateRegion: 'NY', zip: '10118', countryCode: 'US' },
      taxIdCountry: 'US',
      occupation: '15',
    },
  };
}
