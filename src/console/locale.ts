/**
 * The browser's language as `Intl` accepts it. A browser may report a tag
 * `Intl` refuses (`en-US@posix`, `de_DE.UTF-8`, from a POSIX `LANG`), and
 * uPlot builds `Intl.NumberFormat(navigator.language)` when its module loads,
 * which then throws and stops the whole console. So the first acceptable of:
 * the reported tag, the tag without its POSIX charset/modifier and with `-`,
 * the other preferred languages, `en-US`.
 */
const accepted = (tag: string) => {
  try {
    return Intl.NumberFormat.supportedLocalesOf([tag]).length > 0 ? tag : undefined
  } catch {
    return undefined
  }
}

const posixToBcp47 = (tag: string) => tag.split(/[.@]/)[0]!.replaceAll("_", "-")

export const locale = [navigator.language, ...navigator.languages]
  .flatMap((tag) => [tag, posixToBcp47(tag)])
  .map(accepted)
  .find((tag) => tag !== undefined) ?? "en-US"

// What the browser reports is read by libraries too (uPlot, at load): they see the accepted tag.
if (navigator.language !== locale) Object.defineProperty(navigator, "language", { value: locale, configurable: true })

const numbers = new Intl.NumberFormat(locale)

export const formatNumber = (value: number) => numbers.format(value)
