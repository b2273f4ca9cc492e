// TypeBox building blocks shared by every module's schemas.
import { type Static, type TSchema, Type } from '@sinclair/typebox';

/** `type: [X, "null"]`, as the OpenAPI document writes nullable values. */
export function Nullable<T extends TSchema>(schema: T) {
  const base = schema as unknown as { type?: string | string[] };
  if (typeof base.type === 'string') {
    return Type.Unsafe<Static<T> | null>({ ...schema, type: [base.type, 'null'] });
  }
  // A union of literals of one type (an enum such as Role): the type array, with null among the values.
  const branches = (schema as unknown as { anyOf?: Array<{ type?: unknown; const?: unknown }> }).anyOf;
  const type = branches?.[0]?.type;
  if (typeof type === 'string' && branches!.every((b) => 'const' in b && b.type === type)) {
    const { anyOf: _, ...rest } = Object.fromEntries(Object.entries(schema));
    return Type.Unsafe<Static<T> | null>({
      ...rest,
      type: [type, 'null'],
      enum: [...branches!.map((b) => b.const), null],
    });
  }
  return Type.Union([schema, Type.Null()]);
}

export const Timestamp = Type.String({ format: 'date-time' });
export const Id = Type.String({ format: 'uuid' });
export const IdParams = Type.Object({ id: Type.String({ maxLength: 64 }) }, { additionalProperties: false });

export const ErrorSchema = Type.Object(
  {
    status: Type.Integer(),
    code: Type.String(),
    detail: Type.String(),
    errors: Type.Optional(Type.Array(Type.Object({ location: Type.String(), message: Type.String() }))),
  },
  { $id: 'Error', title: 'Error' },
);

/** A page of a list route. */
export function PageOf<T extends TSchema>(item: T) {
  return Type.Object({ data: Type.Array(item), next_cursor: Nullable(Type.String()) });
}

export const Role = Type.Union([
  Type.Literal('owner'),
  Type.Literal('admin'),
  Type.Literal('agent'),
  Type.Literal('viewer'),
]);

export const UserRef = Type.Object({
  id: Type.String(),
  name: Type.String(),
  email: Type.String(),
  avatar_url: Nullable(Type.String()),
});

/** Strict object: unknown fields are refused (422) rather than silently dropped. */
export const Body = <T extends Record<string, TSchema>>(props: T) =>
  Type.Object(props, { additionalProperties: false });

export const iso = (d: Date | string | null | undefined): string | null =>
  d === null || d === undefined ? null : (d instanceof Date ? d : new Date(d)).toISOString();
