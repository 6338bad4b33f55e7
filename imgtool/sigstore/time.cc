#include "sigstore/time.h"

#include <cstdio>

namespace imgtool::sigstore {

namespace {

// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's civil algorithm):
// no timegm, so neither TZ nor the C library's range matters.
int64_t DaysFromCivil(int64_t y, int64_t m, int64_t d) {
  y -= m <= 2 ? 1 : 0;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

bool Digits(std::string_view s, size_t at, size_t n, int64_t* out) {
  if (at + n > s.size()) return false;
  int64_t v = 0;
  for (size_t i = at; i < at + n; ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    v = v * 10 + (s[i] - '0');
  }
  *out = v;
  return true;
}

int DaysInMonth(int64_t y, int64_t m) {
  static const int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  return m == 2 && leap ? 29 : kDays[m - 1];
}

}  // namespace

Result<Time> ParseRfc3339(std::string_view s, const std::string& what) {
  int64_t y, mo, d, h, mi, sec;
  bool shape = s.size() >= 20 && Digits(s, 0, 4, &y) && s[4] == '-' && Digits(s, 5, 2, &mo) && s[7] == '-' &&
               Digits(s, 8, 2, &d) && s[10] == 'T' && Digits(s, 11, 2, &h) && s[13] == ':' && Digits(s, 14, 2, &mi) &&
               s[16] == ':' && Digits(s, 17, 2, &sec);
  size_t at = 19;
  if (shape && s[at] == '.') {
    size_t start = ++at;
    while (at < s.size() && s[at] >= '0' && s[at] <= '9') ++at;
    shape = at > start && at - start <= 9;
  }
  shape = shape && at + 1 == s.size() && s[at] == 'Z';
  if (!shape || mo < 1 || mo > 12 || d < 1 || d > DaysInMonth(y, mo) || h > 23 || mi > 59 || sec > 60) {
    return MakeError(ErrorKind::kInvalidInput, what + ": '" + std::string(s.substr(0, 40)) +
                                                   "' is not an RFC 3339 UTC time (YYYY-MM-DDTHH:MM:SSZ)");
  }
  return DaysFromCivil(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec;
}

std::string FormatRfc3339(Time t) {
  int64_t days = t >= 0 ? t / 86400 : (t - 86399) / 86400;
  int64_t secs = t - days * 86400;
  // civil_from_days, the inverse of DaysFromCivil.
  int64_t z = days + 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const int64_t doe = z - era * 146097;
  const int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const int64_t mp = (5 * doy + 2) / 153;
  const int64_t d = doy - (153 * mp + 2) / 5 + 1;
  const int64_t m = mp < 10 ? mp + 3 : mp - 9;
  const int64_t y = yoe + era * 400 + (m <= 2 ? 1 : 0);
  char buf[160];
  std::snprintf(buf, sizeof(buf), "%04lld-%02lld-%02lldT%02lld:%02lld:%02lldZ", static_cast<long long>(y),
                static_cast<long long>(m), static_cast<long long>(d), static_cast<long long>(secs / 3600),
                static_cast<long long>(secs / 60 % 60), static_cast<long long>(secs % 60));
  return buf;
}

}  // namespace imgtool::sigstore
