import { Type } from '@sinclair/typebox';
import { Body } from '../../platform/http/schemas.js';

/**
 * What a signed-in person may change about themself. Email changes need the address proven and
 * are not offered; the picture (avatar_url, copied from an HTTPS URL) comes with pictures.
 */
export const PatchMeBody = Body({
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'Shown to teammates and customers.' })),
});
