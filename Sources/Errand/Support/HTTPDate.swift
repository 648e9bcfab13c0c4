import Foundation

/// HTTP's timestamps (RFC 9110 §5.6.7): read in all three formats, written in the preferred one.
///
/// Reading is exact about the grammar — one space where it says one, two digits where it says
/// two, `GMT` and nothing else — because a cache must treat an `Expires` it cannot read as
/// already expired (RFC 9111 §5.3), and guessing at a malformed date can keep a response fresh
/// for years. Names of days, months and the zone are read in any case, as every browser does.
/// No `DateFormatter`: it depends on the locale, is not `Sendable`, and is slow per call.
package enum HTTPDate {
    /// The date `text` names, or `nil` when it is not an HTTP-date: IMF-fixdate
    /// (`Sun, 06 Nov 1994 08:49:37 GMT`), the obsolete RFC 850 form (`Sunday, 06-Nov-94
    /// 08:49:37 GMT`, its two-digit year taken as at most 50 years ahead of `now`) or ANSI C's
    /// `asctime()` form (`Sun Nov  6 08:49:37 1994`).
    package static func parse(_ text: some StringProtocol, now: Date = Date()) -> Date? {
        var reader = Reader(Array(text.utf8))
        return reader.imfFixdate() ?? reader.rfc850Date(now: now) ?? reader.asctimeDate()
    }

    /// `date` as an IMF-fixdate, the form HTTP senders must use.
    package static func format(_ date: Date) -> String {
        let (days, secondOfDay) = secondsSince1970(date).floorDivided(by: 86_400)
        let (year, month, day) = civilDate(daysSince1970: days)
        // 1970-01-01 was a Thursday.
        let weekday = Self.dayNames[(days % 7 + 7 + 4) % 7]
        return "\(weekday), \(twoDigits(day)) \(Self.monthNames[month - 1]) \(fourDigits(year)) "
            + "\(twoDigits(secondOfDay / 3600)):\(twoDigits(secondOfDay / 60 % 60)):\(twoDigits(secondOfDay % 60)) GMT"
    }

    private static let dayNames = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    private static let longDayNames = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"]
    private static let monthNames = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ]

    /// Whole seconds since 1970, within the years 1 to 9999 that an HTTP-date can name.
    private static func secondsSince1970(_ date: Date) -> Int {
        let interval = date.timeIntervalSince1970
        guard !interval.isNaN else { return 0 }
        return Int(min(max(interval, -62_135_596_800), 253_402_300_799).rounded(.down))
    }

    private static func twoDigits(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }

    private static func fourDigits(_ value: Int) -> String {
        String(repeating: "0", count: max(0, 4 - String(value).count)) + String(value)
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's `days_from_civil`).
    package static func daysSince1970(year: Int, month: Int, day: Int) -> Int {
        let shiftedYear = month <= 2 ? year - 1 : year
        let era = (shiftedYear >= 0 ? shiftedYear : shiftedYear - 399) / 400
        let yearOfEra = shiftedYear - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The number of days in `month` (1 to 12) of a proleptic Gregorian `year`.
    package static func length(ofMonth month: Int, in year: Int) -> Int {
        switch month {
        case 2: year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// The inverse of ``daysSince1970(year:month:day:)``.
    private static func civilDate(daysSince1970 days: Int) -> (year: Int, month: Int, day: Int) {
        let shifted = days + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shiftedMonth = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
        let month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    /// Reads one of the three forms from the start of the bytes, which it must use up entirely.
    private struct Reader {
        private let bytes: [UInt8]
        private var index = 0

        init(_ bytes: [UInt8]) {
            self.bytes = bytes
        }

        // The names as bytes, made once rather than at every comparison.
        private static let dayNames = HTTPDate.dayNames.map { Array($0.utf8) }
        private static let longDayNames = HTTPDate.longDayNames.map { Array($0.utf8) }
        private static let monthNames = HTTPDate.monthNames.map { Array($0.utf8) }
        private static let zoneNames = [Array("GMT".utf8)]

        /// `day-name "," SP 2DIGIT SP month SP 4DIGIT SP time-of-day SP "GMT"`
        mutating func imfFixdate() -> Date? {
            index = 0
            guard name(in: Self.dayNames) != nil, take(","), take(" "), let day = digits(2), take(" "),
                let month = name(in: Self.monthNames), take(" "), let year = digits(4), take(" "),
                let time = timeOfDay(), take(" "), name(in: Self.zoneNames) != nil, isAtEnd
            else { return nil }
            return date(year: year, month: month + 1, day: day, time: time)
        }

        /// `day-name-l "," SP 2DIGIT "-" month "-" 2DIGIT SP time-of-day SP "GMT"`
        mutating func rfc850Date(now: Date) -> Date? {
            index = 0
            guard name(in: Self.longDayNames) != nil, take(","), take(" "), let day = digits(2), take("-"),
                let month = name(in: Self.monthNames), take("-"), let shortYear = digits(2), take(" "),
                let time = timeOfDay(), take(" "), name(in: Self.zoneNames) != nil, isAtEnd
            else { return nil }
            // RFC 9110: a year more than 50 years ahead is the latest past one with those digits.
            let today = HTTPDate.secondsSince1970(now).floorDivided(by: 86_400).quotient
            let currentYear = HTTPDate.civilDate(daysSince1970: today).year
            var year = currentYear - currentYear % 100 + shortYear
            if year > currentYear + 50 { year -= 100 }
            return date(year: year, month: month + 1, day: day, time: time)
        }

        /// `day-name SP month SP ( 2DIGIT / ( SP DIGIT ) ) SP time-of-day SP 4DIGIT`
        mutating func asctimeDate() -> Date? {
            index = 0
            guard name(in: Self.dayNames) != nil, take(" "), let month = name(in: Self.monthNames),
                take(" "), let day = take(" ") ? digits(1) : digits(2), take(" "), let time = timeOfDay(),
                take(" "), let year = digits(4), isAtEnd
            else { return nil }
            return date(year: year, month: month + 1, day: day, time: time)
        }

        private var isAtEnd: Bool { index == bytes.count }

        /// `hour ":" minute ":" second`, two digits each, in seconds.
        private mutating func timeOfDay() -> Int? {
            guard let hour = digits(2), take(":"), let minute = digits(2), take(":"), let second = digits(2),
                hour < 24, minute < 60, second <= 60  // 60: a leap second
            else { return nil }
            return hour * 3600 + minute * 60 + second
        }

        private func date(year: Int, month: Int, day: Int, time: Int) -> Date? {
            guard day >= 1, day <= HTTPDate.length(ofMonth: month, in: year) else { return nil }
            let days = HTTPDate.daysSince1970(year: year, month: month, day: day)
            return Date(timeIntervalSince1970: TimeInterval(days * 86_400 + time))
        }

        /// Exactly `count` ASCII digits.
        private mutating func digits(_ count: Int) -> Int? {
            guard bytes.count - index >= count else { return nil }
            var value = 0
            for byte in bytes[index..<index + count] {
                guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
            }
            index += count
            return value
        }

        /// The index in `names` of the one that follows, in any case.
        private mutating func name(in names: [[UInt8]]) -> Int? {
            for (position, utf8) in names.enumerated() {
                guard bytes.count - index >= utf8.count,
                    zip(bytes[index..<index + utf8.count], utf8).allSatisfy({ $0 | 0x20 == $1 | 0x20 })
                else { continue }
                // A longer word that starts with this name ("Mondays") is not it.
                let end = index + utf8.count
                if end < bytes.count, (bytes[end] | 0x20) >= UInt8(ascii: "a"), (bytes[end] | 0x20) <= UInt8(ascii: "z")
                {
                    continue
                }
                index = end
                return position
            }
            return nil
        }

        private mutating func take(_ character: Unicode.Scalar) -> Bool {
            guard index < bytes.count, bytes[index] == UInt8(ascii: character) else { return false }
            index += 1
            return true
        }
    }
}

extension Int {
    /// Quotient and remainder rounded toward negative infinity, so a time before 1970 has a
    /// non-negative time of day.
    fileprivate func floorDivided(by divisor: Int) -> (quotient: Int, remainder: Int) {
        let remainder = ((self % divisor) + divisor) % divisor
        return ((self - remainder) / divisor, remainder)
    }
}
