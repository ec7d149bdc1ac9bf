// The type of the control RPC's route plugins: fastify plugins whose schemas are TypeBox
// schemas, so that a route's schema types its handler's request and answer (the type provider).
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyPluginAsync, RawServerDefault } from 'fastify';

export type RoutePlugin<Options extends object> = FastifyPluginAsync<
  Options,
  RawServerDefault,
  TypeBoxTypeProvider
>;
