import { plainRefusal, refusal } from "../../platform/Refusal.ts"

/** No images provider key is configured. */
export class ImagesNotConfigured extends refusal(
  "Denied",
  "ImagesNotConfigured",
  (_: {}) => "Image generation is not configured: set IMAGES_API_KEY (and IMAGES_BASE_URL for a provider other than OpenAI)"
) {}

/** A request the images endpoints cannot serve; the message names the field and the rule. */
export class InvalidImageRequest extends plainRefusal("Invalid", "InvalidImageRequest") {}

/** The images provider kept rate limiting. */
export class ImageProviderLimited extends plainRefusal("Limited", "ImageProviderLimited") {}

/** The images provider rejected the request (its message says why, e.g. a prompt it refuses). */
export class ImageProviderRejected extends plainRefusal("Invalid", "ImageProviderRejected") {}

/** The images provider failed or answered something unusable. */
export class ImageProviderFailed extends plainRefusal("Failed", "ImageProviderFailed") {}
