import Foundation

/// RFC 6265bis §5.1.1's cookie-date algorithm: how an `Expires` attribute is read.
///
/// Servers send dates in every shape (`Wed, 09-Jun-21 10:18:14 GMT`, `Thu Jan 01 1970`, with or
/// without a zone), so the algorithm takes the first token that looks like a time, a day, a month
/// and a year, whatever their order and whatever lies between — unlike ``HTTPDate``, which a cache
/// must read strictly. No `DateFormatter`: it runs for every `Set-Cookie` with an `Expires`.
package enum CookieDate {
    /// The date `value` names in UTC, or `nil` when the algorithm fails to read one.
    package static func parse(_ value: Substring) -> Date? {
        var fields = Fields()
        for token in value.utf8.split(whereSeparator: isDelimiter) {
            fields.take(token)
        }
        return fields.date
    }

    /// `%x09 / %x20-2F / %x3B-40 / %x5B-60 / %x7B-7E`.
    private static func isDelimiter(_ byte: UInt8) -> Bool {
        byte == 0x09 || (0x20...0x2F).contains(byte) || (0x3B...0x40).contains(byte) || (0x5B...0x60).contains(byte)
            || (0x7B...0x7E).contains(byte)
    }

    private static func isDigit(_ byte: UInt8) -> Bool { (0x30...0x39).contains(byte) }

    /// What the tokens gave so far: each field is taken from the first token that matches it.
    private struct Fields {
        var time: (hour: Int, minute: Int, second: Int)?
        var day: Int?
        var month: Int?
        var year: Int?

        private static let months = [
            "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
        ]

        mutating func take(_ token: Substring.UTF8View.SubSequence) {
            if time == nil, let time = Self.time(token) {
                self.time = time
            } else if day == nil, let day = Self.digits(token, count: 1...2) {
                self.day = day
            } else if month == nil, let month = Self.month(token) {
                self.month = month
            } else if year == nil, let year = Self.digits(token, count: 2...4) {
                self.year = year
            }
        }

        /// `count` digits, then nothing or a non-digit and anything: `1*2DIGIT [ non-digit *OCTET ]`.
        private static func digits(_ token: Substring.UTF8View.SubSequence, count: ClosedRange<Int>) -> Int? {
            let run = token.prefix { CookieDate.isDigit($0) }
            guard count.contains(run.count) else { return nil }
            return run.reduce(0) { $0 * 10 + Int($1 - 0x30) }
        }

        /// `time-field ":" time-field ":" time-field [ non-digit *OCTET ]`, each field one or two digits.
        private static func time(_ token: Substring.UTF8View.SubSequence) -> (hour: Int, minute: Int, second: Int)? {
            var rest = token[...]
            var values: [Int] = []
            for index in 0..<3 {
                let run = rest.prefix { CookieDate.isDigit($0) }
                guard (1...2).contains(run.count) else { return nil }
                values.append(run.reduce(0) { $0 * 10 + Int($1 - 0x30) })
                rest = rest.dropFirst(run.count)
                if index < 2 {
                    guard rest.first == UInt8(ascii: ":") else { return nil }
                    rest = rest.dropFirst()
                }
            }
            // After the seconds, a non-digit or the end: a third digit is not a time-field.
            guard rest.first.map({ !CookieDate.isDigit($0) }) ?? true else { return nil }
            return (values[0], values[1], values[2])
        }

        /// A token beginning with a month's three letters, in any case.
        private static func month(_ token: Substring.UTF8View.SubSequence) -> Int? {
            guard token.count >= 3 else { return nil }
            let name = String(
                decoding: token.prefix(3).map { (0x41...0x5A).contains($0) ? $0 | 0x20 : $0 }, as: UTF8.self)
            return months.firstIndex(of: name).map { $0 + 1 }
        }

        /// The date, once every field was found and each is in range (step 5 onwards).
        var date: Date? {
            guard let time, let day, let month, var year else { return nil }
            if (70...99).contains(year) { year += 1900 } else if (0...69).contains(year) { year += 2000 }
            guard (1...31).contains(day), year >= 1601, time.hour <= 23, time.minute <= 59, time.second <= 59,
                day <= Self.days(in: month, of: year)
            else { return nil }
            let days = Self.daysSince1970(year: year, month: month, day: day)
            let seconds = days * 86_400 + time.hour * 3600 + time.minute * 60 + time.second
            return Date(timeIntervalSince1970: TimeInterval(seconds))
        }

        private static func days(in month: Int, of year: Int) -> Int {
            switch month {
            case 2: year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
            case 4, 6, 9, 11: 30
            default: 31
            }
        }

        /// Days from 1970-01-01 to the date in the proleptic Gregorian calendar (Howard Hinnant's `days_from_civil`).
        private static func daysSince1970(year: Int, month: Int, day: Int) -> Int {
            let shifted = month <= 2 ? year - 1 : year
            let era = (shifted >= 0 ? shifted : shifted - 399) / 400
            let yearOfEra = shifted - era * 400
            let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
            let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
            return era * 146_097 + dayOfEra - 719_468
        }
    }
}
