import Errand
import Foundation

/// What a server sends as a cookie's `Expires`: any bytes. `CookieDate.parse` must agree with a
/// plain reading of RFC 6265bis §5.1.1 (below, slow and allocating, its dates from Foundation's
/// calendar), read a slice of a longer string as the slice alone, and give a date from 1601 to
/// 9999 in whole seconds that, written as an IMF-fixdate, reads back as the same date.
enum CookieDateTarget {
    static func run(_ data: Data) {
        let text = String(decoding: data, as: UTF8.self)
        let date = CookieDate.parse(Substring(text))
        let expected = Reference.parse(Array(text.utf8))
        require(date == expected, "\(text.debugDescription) reads as \(describe(date)), not \(describe(expected))")

        // Tokens that would complete any date lie on both sides of the slice.
        let whole = "0:0:0 1 Jan 2000 " + text + " 2 Feb 2002 2:2:2"
        let utf8 = whole.utf8
        let start = utf8.index(utf8.startIndex, offsetBy: 17)
        let slice = Substring(utf8[start..<utf8.index(start, offsetBy: text.utf8.count)])
        require(slice.utf8.elementsEqual(text.utf8), "the slice is the text")
        require(CookieDate.parse(slice) == date, "\(text.debugDescription) reads otherwise within a longer string")

        guard let date else { return }
        let seconds = date.timeIntervalSince1970
        require(
            seconds.rounded(.down) == seconds && (-11_644_473_600...253_402_300_799).contains(seconds),
            "\(text.debugDescription) reads as \(seconds) s since 1970")
        let written = CookieDate.httpDate(date)
        require(
            CookieDate.parse(Substring(written)) == date,
            "\(text.debugDescription) reads as \(written), which reads otherwise")
    }

    private static func describe(_ date: Date?) -> String {
        date.map { "\(CookieDate.httpDate($0)) (\($0.timeIntervalSince1970))" } ?? "nil"
    }

    /// §5.1.1 step by step over arrays of bytes, as the draft words it.
    private enum Reference {
        static func parse(_ bytes: [UInt8]) -> Date? {
            var time: [Int]?
            var day: Int?
            var month: Int?
            var year: Int?
            for token in bytes.split(whereSeparator: isDelimiter).map(Array.init) {
                if time == nil, let value = hmsTime(token) {
                    time = value
                } else if day == nil, let value = leadingDigits(token, 1...2) {
                    day = value
                } else if month == nil, let value = monthName(token) {
                    month = value
                } else if year == nil, let value = leadingDigits(token, 2...4) {
                    year = value
                }
            }
            guard let time, let day, let month, var year else { return nil }
            if year >= 70 && year <= 99 { year += 1900 }
            if year >= 0 && year <= 69 { year += 2000 }
            guard day >= 1, day <= 31, year >= 1601, time[0] <= 23, time[1] <= 59, time[2] <= 59 else { return nil }
            return utcDate(year: year, month: month, day: day, time: time)
        }

        static func isDelimiter(_ byte: UInt8) -> Bool {
            byte == 0x09 || (byte >= 0x20 && byte <= 0x2F) || (byte >= 0x3B && byte <= 0x40)
                || (byte >= 0x5B && byte <= 0x60) || (byte >= 0x7B && byte <= 0x7E)
        }

        static func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }

        /// `n*mDIGIT [ non-digit *OCTET ]`: the whole run of leading digits must be n to m long.
        static func leadingDigits(_ token: [UInt8], _ count: ClosedRange<Int>) -> Int? {
            let run = token.prefix(while: isDigit)
            guard count.contains(run.count) else { return nil }
            return Int(String(decoding: run, as: UTF8.self))
        }

        /// `hms-time [ non-digit *OCTET ]`: split at the first two colons, the third part a day-like field.
        static func hmsTime(_ token: [UInt8]) -> [Int]? {
            let parts = token.split(separator: UInt8(ascii: ":"), maxSplits: 2, omittingEmptySubsequences: false)
            guard parts.count == 3, parts[0].allSatisfy(isDigit), parts[1].allSatisfy(isDigit),
                let hour = leadingDigits(Array(parts[0]), 1...2), let minute = leadingDigits(Array(parts[1]), 1...2),
                let second = leadingDigits(Array(parts[2]), 1...2)
            else { return nil }
            return [hour, minute, second]
        }

        static func monthName(_ token: [UInt8]) -> Int? {
            guard token.count >= 3 else { return nil }
            let name = String(decoding: token.prefix(3), as: UTF8.self).lowercased()
            // Three bytes not all ASCII are at most two characters, and lowercase to no month.
            let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
            return months.firstIndex(of: name).map { $0 + 1 }
        }

        /// Step 6 by Foundation's Gregorian calendar; a date that does not exist does not read
        /// back as the same fields.
        static func utcDate(year: Int, month: Int, day: Int, time: [Int]) -> Date? {
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = .gmt
            let fields = DateComponents(
                year: year, month: month, day: day, hour: time[0], minute: time[1], second: time[2])
            guard let date = calendar.date(from: fields) else { return nil }
            let back = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
            guard back.year == year, back.month == month, back.day == day else { return nil }
            return date
        }
    }
}
