import { Type } from '@sinclair/typebox';
import { Nullable } from '../../platform/http/schemas.js';

/** The rating link's token (a signed token; anything that is not one of ours is a 404). */
export const CsatTokenParams = Type.Object(
  { token: Type.String({ minLength: 1, maxLength: 512 }) },
  { additionalProperties: false },
);

export const CsatRating = Type.Object(
  {
    number: Type.Integer({ description: "The ticket's number." }),
    subject: Type.String(),
    score: Nullable(Type.Integer({ minimum: 1, maximum: 5, description: 'Null until rated.' })),
    comment: Nullable(Type.String({ description: 'Null until rated, or when the rating had none.' })),
  },
  { title: 'CsatRating' },
);

export const RateBody = Type.Object(
  {
    score: Type.Integer({ minimum: 1, maximum: 5, description: '1 (very unhappy) to 5 (very happy).' }),
    comment: Type.Optional(Nullable(Type.String({ maxLength: 2000 }))),
  },
  { additionalProperties: false },
);
