import { Type, type TSchema } from 'typebox';
import { listCountMax } from './pagination.js';

/** The success envelope of every call: `{ message, data, traceId }`. */
export function Envelope<T extends TSchema>(data: T) {
  return Type.Object({ message: Type.String(), data, traceId: Type.String() });
}

export const PaginationSchema = Type.Object({
  totalResults: Type.Integer({ minimum: 0, maximum: listCountMax, description: `matching records, counted up to ${listCountMax}: beyond, this is ${listCountMax} and totalResultsExact is false` }),
  totalResultsExact: Type.Boolean({ description: `false when more than ${listCountMax} records match (totalResults is then a floor); page with hasMoreResults and nextStartAfterId` }),
  hasMoreResults: Type.Boolean(),
  nextStartAfterId: Type.Union([Type.String(), Type.Null()]),
});

/** The list envelope: the success envelope plus a sibling `pagination`. */
export function ListEnvelope<T extends TSchema>(item: T) {
  return Type.Object({
    message: Type.String(),
    data: Type.Array(item),
    pagination: PaginationSchema,
    traceId: Type.String(),
  });
}

export const ErrorBodySchema = Type.Object(
  {
    message: Type.String(),
    code: Type.String(),
    details: Type.Optional(Type.Array(Type.Object({ field: Type.String(), message: Type.String() }))),
    traceId: Type.String(),
  },
  { title: 'Error' },
);

/** Strings in bodies always carry a maximum length; these are the usual ones. */
export const Text = {
  id: (options: object = {}) => Type.String({ minLength: 1, maxLength: 64, ...options }),
  short: (options: object = {}) => Type.String({ minLength: 1, maxLength: 100, ...options }),
  medium: (options: object = {}) => Type.String({ minLength: 1, maxLength: 255, ...options }),
  long: (options: object = {}) => Type.String({ minLength: 1, maxLength: 1000, ...options }),
  amount: (options: object = {}) =>
    Type.String({ minLength: 1, maxLength: 40, description: 'decimal string, for example "10.50"', ...options }),
};
