import { Schema } from "effect"
import validator from "validator"

/**
 * E-mail addresses and field names as leads, contact lists and their CSV
 * imports all take them.
 */

/** A deliverable-looking address: a real validator (RFC 5321 lengths, a dotted domain), no display names. */
export const isValidEmail = (value: string): boolean =>
  validator.isEmail(value, { allow_display_name: false, require_tld: true, allow_ip_domain: false, allow_utf8_local_part: true })

/** An e-mail address as `validator` accepts it, after trimming the white space around it. */
export const LeadEmail = Schema.String.check(
  Schema.makeFilter((value: string) => isValidEmail(value.trim()) || "must be a valid e-mail address")
)

/** Names of further fields (merge fields of a list row, custom fields of a lead): `{{jobTitle}}`, `fields.jobTitle`. */
export const fieldNamePattern = /^[A-Za-z][A-Za-z0-9_]{0,63}$/
