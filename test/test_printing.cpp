// Array::to_string against NumPy 1.24's repr with the default print options. Every expected string
// was produced once by python3 -c 'import numpy as np; print(repr(...))' on the array described in
// the comment above it (the bfloat16 one, which NumPy lacks, follows the same rules by hand).

#include <cmath>

#include "testing.h"

using namespace kusari;

namespace {

Array floats(const std::vector<double>& values, const Shape& shape, Dtype dtype = Dtype::float64) {
  return Array::from_vector(values, shape, dtype);
}

// 0, 1, ..., n-1 in the given shape and dtype.
Array iota(const Shape& shape, Dtype dtype) {
  return Array::arange(0, static_cast<double>(shape.numel()), 1, dtype).reshape(shape);
}

}  // namespace

TEST_CASE("float32 2x3 aligns on the decimal point") {
  // np.array([[1.5, -2.25, 0.1], [3.0, 100.0, 1/3]], dtype=np.float32)
  CHECK(floats({1.5, -2.25, 0.1, 3.0, 100.0, 1.0 / 3}, {2, 3}, Dtype::float32).to_string() ==
        R"(array([[  1.5       ,  -2.25      ,   0.1       ],
       [  3.        , 100.        ,   0.33333334]], dtype=float32))");
}

TEST_CASE("float64 omits the dtype and shows at most 8 decimals") {
  // np.array([1.0, 2.5, -0.125, 3.14159265358979, 10.0])
  CHECK(floats({1.0, 2.5, -0.125, 3.14159265358979, 10.0}, {5}).to_string() ==
        R"(array([ 1.        ,  2.5       , -0.125     ,  3.14159265, 10.        ]))");
  // np.array([1.0, -2.0, 30.0])
  CHECK(floats({1.0, -2.0, 30.0}, {3}).to_string() == R"(array([ 1., -2., 30.]))");
}

TEST_CASE("integers right-align to the widest, int64 without a dtype") {
  // np.array([[1, -20, 300], [4, 5, 6]], dtype=np.int32)
  CHECK(floats({1, -20, 300, 4, 5, 6}, {2, 3}, Dtype::int32).to_string() ==
        R"(array([[  1, -20, 300],
       [  4,   5,   6]], dtype=int32))");
  // np.array([-9223372036854775807, 5, 0])
  CHECK(Array::from_vector<int64_t>({-9223372036854775807, 5, 0}, {3}).to_string() ==
        R"(array([-9223372036854775807,                    5,                    0]))");
  // np.array([0, 255, 7], dtype=np.uint8)
  CHECK(floats({0, 255, 7}, {3}, Dtype::uint8).to_string() == R"(array([  0, 255,   7], dtype=uint8))");
}

TEST_CASE("bool pads True to the width of False") {
  // np.array([True, False, True])
  CHECK(Array::from_vector<bool>({true, false, true}, {3}).to_string() == R"(array([ True, False,  True]))");
  // np.array([[True, True]])
  CHECK(Array::from_vector<bool>({true, true}, {1, 2}).to_string() == R"(array([[ True,  True]]))");
}

TEST_CASE("0-dimensional arrays print their value without brackets") {
  // np.array(3.5, dtype=np.float32), np.array(-0.1), np.array(7), np.array(True), np.array(1e-7, dtype=np.float16)
  CHECK(Array::scalar(3.5).to_string() == R"(array(3.5, dtype=float32))");
  CHECK(Array::scalar(-0.1, Dtype::float64).to_string() == R"(array(-0.1))");
  CHECK(Array::scalar(7, Dtype::int64).to_string() == R"(array(7))");
  CHECK(Array::scalar(1, Dtype::bool_).to_string() == R"(array(True))");
  CHECK(Array::scalar(1e-7, Dtype::float16).to_string() == R"(array(1.e-07, dtype=float16))");
}

TEST_CASE("tiny, huge or widely spread magnitudes switch every element to scientific notation") {
  // np.array([1e-5, 1.0, 123456.0])
  CHECK(floats({1e-5, 1.0, 123456.0}, {3}).to_string() == R"(array([1.00000e-05, 1.00000e+00, 1.23456e+05]))");
  // np.array([1e8, 1.5])
  CHECK(floats({1e8, 1.5}, {2}).to_string() == R"(array([1.0e+08, 1.5e+00]))");
  // np.array([1e100, -2.5e-7])
  CHECK(floats({1e100, -2.5e-7}, {2}).to_string() == R"(array([ 1.0e+100, -2.5e-007]))");
  // np.array([0.001, 1000.5])
  CHECK(floats({0.001, 1000.5}, {2}).to_string() == R"(array([1.0000e-03, 1.0005e+03]))");
  // np.array([1e-4, 1.0], dtype=np.float32): float32(1e-4) is just below 1e-4
  CHECK(floats({1e-4, 1.0}, {2}, Dtype::float32).to_string() == R"(array([1.e-04, 1.e+00], dtype=float32))");
  // np.array([1.1, 1.2345678e-7], dtype=np.float32): padding digits are the value's own
  CHECK(floats({1.1, 1.2345678e-7}, {2}, Dtype::float32).to_string() ==
        R"(array([1.1000000e+00, 1.2345679e-07], dtype=float32))");
}

TEST_CASE("float16 prints the shortest digits that identify a half") {
  // np.array([0.1, 1/3, 2.5, -1000.0], dtype=np.float16)
  CHECK(floats({0.1, 1.0 / 3, 2.5, -1000.0}, {4}, Dtype::float16).to_string() ==
        R"(array([ 9.998e-02,  3.333e-01,  2.500e+00, -1.000e+03], dtype=float16))");
  // np.array([0.1, 1/3, 2.5, -100.0], dtype=np.float16): the max/min ratio rounds to 1000 in float16
  CHECK(floats({0.1, 1.0 / 3, 2.5, -100.0}, {4}, Dtype::float16).to_string() ==
        R"(array([   0.1   ,    0.3333,    2.5   , -100.    ], dtype=float16))");
  // np.array([0.1, 1/3, 65504, -6e-8], dtype=np.float16)
  CHECK(floats({0.1, 1.0 / 3, 65504, -6e-8}, {4}, Dtype::float16).to_string() ==
        R"(array([ 9.998e-02,  3.333e-01,  6.550e+04, -5.960e-08], dtype=float16))");
  // np.array([16544.0, 2049.0, 0.5], dtype=np.float16)
  CHECK(floats({16544.0, 2049.0, 0.5}, {3}, Dtype::float16).to_string() ==
        R"(array([1.654e+04, 2.048e+03, 5.000e-01], dtype=float16))");
}

TEST_CASE("bfloat16 follows the same rules") {
  CHECK(floats({0.1, 0.5, -1.25, 3}, {4}, Dtype::bfloat16).to_string() ==
        R"(array([ 0.1 ,  0.5 , -1.25,  3.  ], dtype=bfloat16))");
}

TEST_CASE("nan, inf and signed zero") {
  // np.array([np.nan, -np.inf, 1.5, np.inf])
  CHECK(floats({NAN, -INFINITY, 1.5, INFINITY}, {4}).to_string() == R"(array([ nan, -inf,  1.5,  inf]))");
  // np.array([np.nan, -np.inf])
  CHECK(floats({NAN, -INFINITY}, {2}).to_string() == R"(array([ nan, -inf]))");
  // np.array([-0.0, 1.5])
  CHECK(floats({-0.0, 1.5}, {2}).to_string() == R"(array([-0. ,  1.5]))");
}

TEST_CASE("3-D arrays separate blocks with a blank line") {
  // (np.arange(24, dtype=np.float32) / 4).reshape(2, 3, 4)
  const Array x = iota({2, 3, 4}, Dtype::float32) / 4.0;
  CHECK(x.to_string() == R"(array([[[0.  , 0.25, 0.5 , 0.75],
        [1.  , 1.25, 1.5 , 1.75],
        [2.  , 2.25, 2.5 , 2.75]],

       [[3.  , 3.25, 3.5 , 3.75],
        [4.  , 4.25, 4.5 , 4.75],
        [5.  , 5.25, 5.5 , 5.75]]], dtype=float32))");
  // the same array .transpose(2, 0, 1)[::-1, :, ::2]
  constexpr auto none = std::nullopt;
  CHECK(x.transpose({2, 0, 1}).get_item({Slice{none, none, -1}, Slice{}, Slice{none, none, 2}}).to_string() ==
        R"(array([[[0.75, 2.75],
        [3.75, 5.75]],

       [[0.5 , 2.5 ],
        [3.5 , 5.5 ]],

       [[0.25, 2.25],
        [3.25, 5.25]],

       [[0.  , 2.  ],
        [3.  , 5.  ]]], dtype=float32))");
  // np.arange(24, dtype=np.float64).reshape(2, 3, 4)[:, 1]
  CHECK(iota({2, 3, 4}, Dtype::float64).get_item({Slice{}, 1}).to_string() == R"(array([[ 4.,  5.,  6.,  7.],
       [16., 17., 18., 19.]]))");
}

TEST_CASE("long rows wrap at 75 columns and the dtype moves to its own line when it does not fit") {
  // np.arange(30, dtype=np.float32) / 7
  std::vector<float> sevenths;
  for (int i = 0; i < 30; ++i) sevenths.push_back(static_cast<float>(i) / 7.0f);
  CHECK(Array::from_vector(sevenths, {30}).to_string() ==
        R"(array([0.        , 0.14285715, 0.2857143 , 0.42857143, 0.5714286 ,
       0.71428573, 0.85714287, 1.        , 1.1428572 , 1.2857143 ,
       1.4285715 , 1.5714285 , 1.7142857 , 1.8571428 , 2.        ,
       2.142857  , 2.2857144 , 2.4285715 , 2.5714285 , 2.7142856 ,
       2.857143  , 3.        , 3.142857  , 3.2857144 , 3.4285715 ,
       3.5714285 , 3.7142856 , 3.857143  , 4.        , 4.142857  ],
      dtype=float32))");
  // np.arange(60, dtype=np.int64).reshape(2, 30) * 1000
  CHECK((iota({2, 30}, Dtype::int64) * Array::scalar(1000, Dtype::int64)).to_string() ==
        R"(array([[    0,  1000,  2000,  3000,  4000,  5000,  6000,  7000,  8000,
         9000, 10000, 11000, 12000, 13000, 14000, 15000, 16000, 17000,
        18000, 19000, 20000, 21000, 22000, 23000, 24000, 25000, 26000,
        27000, 28000, 29000],
       [30000, 31000, 32000, 33000, 34000, 35000, 36000, 37000, 38000,
        39000, 40000, 41000, 42000, 43000, 44000, 45000, 46000, 47000,
        48000, 49000, 50000, 51000, 52000, 53000, 54000, 55000, 56000,
        57000, 58000, 59000]]))");
}

TEST_CASE("more than 1000 elements are summarised, formatted from the items shown") {
  // np.arange(2000, dtype=np.float32)
  CHECK(iota({2000}, Dtype::float32).to_string() ==
        R"(array([0.000e+00, 1.000e+00, 2.000e+00, ..., 1.997e+03, 1.998e+03,
       1.999e+03], dtype=float32))");
  // np.arange(2000, dtype=np.float64).reshape(100, 20) / 8
  CHECK((iota({100, 20}, Dtype::float64) / 8.0).to_string() ==
        R"(array([[0.00000e+00, 1.25000e-01, 2.50000e-01, ..., 2.12500e+00,
        2.25000e+00, 2.37500e+00],
       [2.50000e+00, 2.62500e+00, 2.75000e+00, ..., 4.62500e+00,
        4.75000e+00, 4.87500e+00],
       [5.00000e+00, 5.12500e+00, 5.25000e+00, ..., 7.12500e+00,
        7.25000e+00, 7.37500e+00],
       ...,
       [2.42500e+02, 2.42625e+02, 2.42750e+02, ..., 2.44625e+02,
        2.44750e+02, 2.44875e+02],
       [2.45000e+02, 2.45125e+02, 2.45250e+02, ..., 2.47125e+02,
        2.47250e+02, 2.47375e+02],
       [2.47500e+02, 2.47625e+02, 2.47750e+02, ..., 2.49625e+02,
        2.49750e+02, 2.49875e+02]]))");
  // np.arange(1200, dtype=np.int64).reshape(2, 600)
  CHECK(iota({2, 600}, Dtype::int64).to_string() == R"(array([[   0,    1,    2, ...,  597,  598,  599],
       [ 600,  601,  602, ..., 1197, 1198, 1199]]))");
}

TEST_CASE("hidden elements of a summarised array do not affect the format") {
  // a = np.full(2000, 7.25); a[1000] = 1e10
  const Array a = Array::full({2000}, 7.25, Dtype::float64);
  a.get_item({1000}).fill(1e10);
  CHECK(a.to_string() == R"(array([7.25, 7.25, 7.25, ..., 7.25, 7.25, 7.25]))");
  // b = np.full(2000, 5); b[1000] = 123456
  const Array b = Array::full({2000}, 5, Dtype::int64);
  b.get_item({1000}).fill(123456);
  CHECK(b.to_string() == R"(array([5, 5, 5, ..., 5, 5, 5]))");
}

TEST_CASE("a summarised 3-D array elides whole blocks") {
  // np.arange(3000, dtype=np.int32).reshape(10, 15, 20)
  CHECK(iota({10, 15, 20}, Dtype::int32).to_string() == R"(array([[[   0,    1,    2, ...,   17,   18,   19],
        [  20,   21,   22, ...,   37,   38,   39],
        [  40,   41,   42, ...,   57,   58,   59],
        ...,
        [ 240,  241,  242, ...,  257,  258,  259],
        [ 260,  261,  262, ...,  277,  278,  279],
        [ 280,  281,  282, ...,  297,  298,  299]],

       [[ 300,  301,  302, ...,  317,  318,  319],
        [ 320,  321,  322, ...,  337,  338,  339],
        [ 340,  341,  342, ...,  357,  358,  359],
        ...,
        [ 540,  541,  542, ...,  557,  558,  559],
        [ 560,  561,  562, ...,  577,  578,  579],
        [ 580,  581,  582, ...,  597,  598,  599]],

       [[ 600,  601,  602, ...,  617,  618,  619],
        [ 620,  621,  622, ...,  637,  638,  639],
        [ 640,  641,  642, ...,  657,  658,  659],
        ...,
        [ 840,  841,  842, ...,  857,  858,  859],
        [ 860,  861,  862, ...,  877,  878,  879],
        [ 880,  881,  882, ...,  897,  898,  899]],

       ...,

       [[2100, 2101, 2102, ..., 2117, 2118, 2119],
        [2120, 2121, 2122, ..., 2137, 2138, 2139],
        [2140, 2141, 2142, ..., 2157, 2158, 2159],
        ...,
        [2340, 2341, 2342, ..., 2357, 2358, 2359],
        [2360, 2361, 2362, ..., 2377, 2378, 2379],
        [2380, 2381, 2382, ..., 2397, 2398, 2399]],

       [[2400, 2401, 2402, ..., 2417, 2418, 2419],
        [2420, 2421, 2422, ..., 2437, 2438, 2439],
        [2440, 2441, 2442, ..., 2457, 2458, 2459],
        ...,
        [2640, 2641, 2642, ..., 2657, 2658, 2659],
        [2660, 2661, 2662, ..., 2677, 2678, 2679],
        [2680, 2681, 2682, ..., 2697, 2698, 2699]],

       [[2700, 2701, 2702, ..., 2717, 2718, 2719],
        [2720, 2721, 2722, ..., 2737, 2738, 2739],
        [2740, 2741, 2742, ..., 2757, 2758, 2759],
        ...,
        [2940, 2941, 2942, ..., 2957, 2958, 2959],
        [2960, 2961, 2962, ..., 2977, 2978, 2979],
        [2980, 2981, 2982, ..., 2997, 2998, 2999]]], dtype=int32))");
}

TEST_CASE("empty arrays show their shape unless it is (0,), and always their dtype") {
  // np.zeros(0, dtype=np.float32), np.zeros(0), np.zeros((2, 0))
  CHECK(Array::zeros({0}).to_string() == R"(array([], dtype=float32))");
  CHECK(Array::zeros({0}, Dtype::float64).to_string() == R"(array([], dtype=float64))");
  CHECK(Array::zeros({2, 0}, Dtype::float64).to_string() == R"(array([], shape=(2, 0), dtype=float64))");
}

TEST_CASE("operator<< prints to_string") {
  std::ostringstream out;
  out << Array::from_vector<int64_t>({1, 2}, {2});
  CHECK(out.str() == "array([1, 2])");
}
