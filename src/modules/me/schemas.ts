import { Type } from '@sinclair/typebox';
import { Body, Nullable } from '../../platform/http/schemas.js';

/**
 * What a signed-in person may change about themself. Email changes need the address proven and
 * are not offered. avatar_url copies a picture from an HTTPS URL (src/modules/images).
 */
export const PatchMeBody = Body({
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'Shown to teammates and customers.' })),
  avatar_url: Type.Optional(
    Nullable(
      Type.String({
        minLength: 1,
        maxLength: 2000,
        description:
          'An HTTPS URL of a picture: fetched by the server (public addresses only, redirects checked, 5 MB, 10 s), ' +
          'processed like an upload, and served from this service. null removes the picture.',
      }),
    ),
  ),
});
