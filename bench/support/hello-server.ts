// The anchor of the balance scenario: a bare Fastify hello-world, nothing else.
import Fastify from 'fastify';

const app = Fastify({ logger: false });
app.get('/', async () => ({ hello: 'world' }));
app.get('/health/ready', async () => ({ ready: true }));
await app.listen({ host: '127.0.0.1', port: Number(process.env.PORT ?? 0) });
