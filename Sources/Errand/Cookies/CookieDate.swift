import Foundation

/// RFC 6265bis §5.1.1's cookie-date algorithm: how an `Expires` attribute is read.
///
/// Servers send dates in every shape (`Wed, 09-Jun-21 10:18:14 GMT`, `Thu Jan 01 1970`, with or
/// without a zone), so the algorithm takes the first token that looks like a time, a day, a month
/// and a year, whatever their order and whatever lies between — unlike ``HTTPDate``, which a cache
/// must read strictly. No `DateFormatter` and no allocation: it runs for every `Set-Cookie` with
/// an `Expires`.
package enum CookieDate {
    /// The date `value` names in UTC, or `nil` when the algorithm fails to read one.
    package static func parse(_ value: Substring) -> Date? {
        if let date = value.utf8.withContiguousStorageIfAvailable(parse(bytes:)) { return date }
        // Only a string bridged from Objective-C lacks contiguous UTF-8.
        return Array(value.utf8).withUnsafeBufferPointer(parse(bytes:))
    }

    /// `date` as an IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`), which ``parse(_:)`` reads back
    /// as the same date for every year from 1601 to 9999.
    package static func httpDate(_ date: Date) -> String {
        HTTPDate.format(date)
    }

    /// Steps 1 and 2: the date-tokens, each offered to the productions in the draft's order.
    private static func parse(bytes: UnsafeBufferPointer<UInt8>) -> Date? {
        var fields = Fields()
        var index = 0
        while index < bytes.count {
            while index < bytes.count, isDelimiter(bytes[index]) { index += 1 }
            let start = index
            while index < bytes.count, !isDelimiter(bytes[index]) { index += 1 }
            if start < index { fields.take(Token(bytes: bytes, start: start, end: index)) }
            // Once every field is found no later token can change the result.
            if fields.isFull { break }
        }
        return fields.date
    }

    /// `%x09 / %x20-2F / %x3B-40 / %x5B-60 / %x7B-7E`.
    private static func isDelimiter(_ byte: UInt8) -> Bool {
        switch byte {
        case 0x09, 0x20...0x2F, 0x3B...0x40, 0x5B...0x60, 0x7B...0x7E: true
        default: false
        }
    }

    /// One date-token: a run of non-delimiters, by position in the value's bytes.
    private struct Token {
        let bytes: UnsafeBufferPointer<UInt8>
        let start: Int
        let end: Int

        /// `[ non-digit *OCTET ]` at `index`: the token ends there or goes on with a non-digit.
        func endsOrNonDigit(at index: Int) -> Bool {
            index == end || !(0x30...0x39).contains(bytes[index])
        }

        /// The number the digits from `index` spell and where they stop, when there are
        /// `count` of them; a longer run is refused before its value can overflow.
        func digits(at index: Int, count: ClosedRange<Int>) -> (value: Int, next: Int)? {
            var value = 0
            var next = index
            while next < end, (0x30...0x39).contains(bytes[next]) {
                guard next - index < count.upperBound else { return nil }
                value = value * 10 + Int(bytes[next] &- 0x30)
                next += 1
            }
            return count.contains(next - index) ? (value, next) : nil
        }

        /// `1*2DIGIT [ non-digit *OCTET ]` (day-of-month) or `2*4DIGIT [ non-digit *OCTET ]` (year).
        func number(count: ClosedRange<Int>) -> Int? {
            guard let (value, next) = digits(at: start, count: count), endsOrNonDigit(at: next) else { return nil }
            return value
        }

        /// `time-field ":" time-field ":" time-field [ non-digit *OCTET ]`, `time-field = 1*2DIGIT`.
        var time: (hour: Int, minute: Int, second: Int)? {
            guard let (hour, afterHour) = digits(at: start, count: 1...2), colon(at: afterHour),
                let (minute, afterMinute) = digits(at: afterHour + 1, count: 1...2), colon(at: afterMinute),
                let (second, afterSecond) = digits(at: afterMinute + 1, count: 1...2), endsOrNonDigit(at: afterSecond)
            else { return nil }
            return (hour, minute, second)
        }

        private func colon(at index: Int) -> Bool {
            index < end && bytes[index] == UInt8(ascii: ":")
        }

        /// `( "jan" / "feb" / … / "dec" ) *OCTET`, in any case: the month's number.
        var month: Int? {
            guard end - start >= 3 else { return nil }
            // Setting 0x20 lowercases ASCII letters and turns no other byte into one.
            let name =
                UInt32(bytes[start] | 0x20) << 16 | UInt32(bytes[start + 1] | 0x20) << 8
                | UInt32(bytes[start + 2] | 0x20)
            return Self.months.firstIndex(of: name).map { $0 + 1 }
        }

        private static let months: [UInt32] = [
            "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
        ].map { name in name.utf8.reduce(0) { $0 << 8 | UInt32($1) } }
    }

    /// What the tokens gave so far: each field is taken from the first token that matches it.
    private struct Fields {
        var time: (hour: Int, minute: Int, second: Int)?
        var day: Int?
        var month: Int?
        var year: Int?

        var isFull: Bool { time != nil && day != nil && month != nil && year != nil }

        /// Step 2's sub-steps: the first production whose field is still missing and that the
        /// token matches takes it; a token matching none is ignored.
        mutating func take(_ token: Token) {
            if time == nil, let time = token.time {
                self.time = time
            } else if day == nil, let day = token.number(count: 1...2) {
                self.day = day
            } else if month == nil, let month = token.month {
                self.month = month
            } else if year == nil, let year = token.number(count: 2...4) {
                self.year = year
            }
        }

        /// Steps 3 to 7: the year's century, the checks, and the date in UTC.
        var date: Date? {
            guard let time, let day, let month, var year else { return nil }
            if (70...99).contains(year) { year += 1900 } else if (0...69).contains(year) { year += 2000 }
            guard (1...31).contains(day), year >= 1601, time.hour <= 23, time.minute <= 59, time.second <= 59,
                day <= HTTPDate.length(ofMonth: month, in: year)
            else { return nil }
            let days = HTTPDate.daysSince1970(year: year, month: month, day: day)
            let seconds = days * 86_400 + time.hour * 3600 + time.minute * 60 + time.second
            return Date(timeIntervalSince1970: TimeInterval(seconds))
        }
    }
}
